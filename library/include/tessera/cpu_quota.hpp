#pragma once
// The CPU quota of this process's control group, and the threads it can keep busy.
namespace tessera {

/// The CPU quota of this process's control group, in cores: the smallest
/// cfs_quota_us / cfs_period_us (cgroup v1 `cpu`) or cpu.max (cgroup v2) on the path from
/// its group up to the root. 0 when there is none or it cannot be read.
double cpu_quota_cores();

/// A control group's CPU quota: `cores` of CPU time per `period_us` (cgroup v1
/// cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max); {0, 0} for none.
struct CpuQuota {
  double cores = 0;
  double period_us = 0;
};

/// The quota cpu_quota_cores() reads, with the period of the group it comes from.
CpuQuota cpu_quota();

/// The threads a node of `cores` cores can run at once under a CPU quota of `quota`
/// cores (0 = none): every core without a quota, else ceil(quota) of them (at least 1).
/// More threads than that only share the quota's time: on the emulated 4 x 1 cluster
/// (0.45 CPU a node) the one-rank pipeline's compute on two threads cost what one
/// thread's samples priced at the quota's steady state (4096² -3 … +0.2 %, 1024² -23 …
/// +38 %; benchmarker/README.md). Throws InvalidArgument for cores < 1 or a negative
/// quota. Pure.
int quota_cores(int cores, double quota);

/// Whether `quota` stops a node of `cores` cores whose `busy` threads want the CPU: a
/// quota (and its period) is set and is below the threads that can run at once,
/// min(busy, cores). Pure.
bool quota_stops(const CpuQuota& quota, int busy, int cores);

/// How a CPU quota lets a node whose threads stay busy run: `cpu_us` of CPU time per
/// `cycle_us` of wall time; {0, 0} for none. The scheduler takes it from the quota and its
/// period (quota_cycle): the cycle tessera-bench measures where the kernel enforces the
/// quota in coarser steps (one thread spinning: {run, run + stop}) priced the emulated
/// 4 x 1 cluster worse (benchmarker/README.md, "No more wake-ups than stops").
struct QuotaCycle {
  double cpu_us = 0;
  double cycle_us = 0;
};

/// {quota.cores x quota.period_us, quota.period_us}; {0, 0} without a quota or period. Pure.
QuotaCycle quota_cycle(const CpuQuota& quota);

/// The wall time of `wall_us` of a node's work that was priced unstopped, in which its
/// threads spent `cpu_us` of CPU time (computing or polling for messages: a waiting rank
/// spends CPU time too), under a quota that runs the node `cycle` (cgroup CFS
/// bandwidth). At the threads' average number r = cpu_us / wall_us the node runs a
/// window of cycle.cpu_us / r µs of wall time, then is stopped for the rest of the cycle:
/// the work pays the stop each time a window ends inside it. It starts at a random moment
/// of the cycle. With x = cpu_us / cycle.cpu_us and f = window / cycle, it starts in a
/// stop 1 - f of the time (then with a whole window: floor(x) stops) and inside a window f
/// of the time (floor(x) + 1 stops with probability frac(x)): the median is floor(x), one
/// more when f frac(x) > 1/2 (never at f <= 1/2, e.g. the emulated 4 x 1 cluster's 0.45
/// CPU). Long work tends to cpu_us x cycle / cycle.cpu_us, the steady state. A step
/// starting anywhere in a window (round(x) stops) priced that cluster's validations worse
/// with four databases of four (benchmarker/README.md). `wall_us` itself without a
/// quota, or when the threads fit in it (window >= cycle). Throws InvalidArgument for a
/// negative or non-finite time or cycle. Pure.
double quota_stretched_us(double wall_us, double cpu_us, const QuotaCycle& cycle);

/// The wall time of one of a node's back-to-back runs, each of `wall_us` priced unstopped
/// in which its threads spent `cpu_us` of CPU time, under a quota that runs the node
/// `cycle`: as quota_stretched_us, but a run starts where the previous one left the node,
/// inside a window, so it meets round(cpu_us / cycle.cpu_us) stops (the median). The
/// state of a run that follows the same plan's run, as tessera-validate measures it
/// (--warm-runs) and a program that runs a plan in a loop meets it. Ranks that share a
/// node's quota stop at different moments (the kernel hands the quota to each core in
/// slices), and the one still running polls for a message from the stopped one: on the
/// emulated 2 x 2 cluster (0.9 CPU a node) two ranks of one node ran the 512² σ 3
/// derivative pipeline in 7.0-8.7 ms a run (three launches), where it runs 2.3 ms
/// unstopped and one rank alone 1.9 ms. Throws as quota_stretched_us. Pure.
double quota_back_to_back_us(double wall_us, double cpu_us, const QuotaCycle& cycle);

/// The wall time `cpu_us` of one thread's work takes on a node of `cores` cores whose
/// `busy` threads (the ranks' threads, computing or polling for messages) share `quota`:
/// cpu_us times the threads' turns on the cores, min(busy, cores) at once, stretched by
/// quota_stretched_us when the quota stops them (quota_stops): a step starts when a wait
/// ends, at a random moment of the period. On the emulated 4 x 1 cluster one rank's 64 MiB
/// scatter copy read 13-17 ms where it runs 7.3 ms unstopped. Throws InvalidArgument for
/// cpu_us < 0, busy < 1, cores < 1 or a negative quota or period. Pure.
double quota_wall_us(double cpu_us, const CpuQuota& quota, int busy, int cores);

}  // namespace tessera
