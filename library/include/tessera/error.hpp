#pragma once
// Errors a caller can cause. A broken internal invariant is an assert, not one of these.
#include <stdexcept>
#include <string>

namespace tessera {

/// A caller's mistake (bad option value, infeasible grid, unreadable file...).
/// what() is one line that names the problem and is fit to show a user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An argument or option value outside its domain (unknown name, sigma <= 0, ...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// A decomposition that cannot run (X*Y != P, tiles narrower than the halo, ...).
class InfeasiblePlan : public Error {
 public:
  using Error::Error;
};

/// A file that is missing, unreadable or not what it claims to be.
class IoError : public Error {
 public:
  using Error::Error;
};

}  // namespace tessera
