#pragma once
// A worker thread for the probes: it lives for the whole run, as a thread pool's do (a
// thread started per sample would first run on its parent's core), and runs `job` each
// time it is told to. No tessera code.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace probe {

class Worker {
 public:
  explicit Worker(std::function<void()> job) : job_(std::move(job)), thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void run() {
    {
      std::lock_guard<std::mutex> lock(m_);
      ++asked_;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return done_ == asked_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [&] { return quit_ || asked_ > done_; });
      if (quit_) return;
      lock.unlock();
      job_();
      lock.lock();
      ++done_;
      cv_.notify_all();
    }
  }
  std::function<void()> job_;
  std::mutex m_;
  std::condition_variable cv_;
  long asked_ = 0, done_ = 0;
  bool quit_ = false;
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace probe
