#pragma once
// The CPU quota of this process's control group, and the threads it can keep busy.
namespace tessera {

/// The CPU quota of this process's control group, in cores: the smallest
/// cfs_quota_us / cfs_period_us (cgroup v1 `cpu`) or cpu.max (cgroup v2) on the path from
/// its group up to the root. 0 when there is none or it cannot be read.
double cpu_quota_cores();

/// The threads a node of `cores` cores can run at once under a CPU quota of `quota`
/// cores (0 = none): every core without a quota, else ceil(quota) of them (at least 1).
/// More threads than that only share the quota's time: on the emulated 4 x 1 cluster
/// (0.45 CPU a node) the one-rank pipeline's compute on two threads cost what one
/// thread's samples priced at the quota's steady state (4096² -3 … +0.2 %, 1024² -23 …
/// +38 %; benchmarker/README.md). Throws InvalidArgument for cores < 1 or a negative
/// quota. Pure.
int quota_cores(int cores, double quota);

}  // namespace tessera
