// Reading Linux's control groups for the up-front budgets (memory_budget, thread_budget): which cgroup of a controller
// this process is in, and every level from there up to the root, v2 and v1 alike. Plain file reads under `root`
// (tests point it at a folder laid out as /proc and /sys/fs/cgroup); where the files are absent (other systems, no
// cgroups) nothing is visited.
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace core {

// The whole text of the file at `path`, or "" where it cannot be read.
std::string read_text(const std::string& path);

// For each line of `root`/proc/self/cgroup that names `controller` (v1 "4:memory:/a/b", its controllers a comma list)
// or is the unified hierarchy (v2 "0::/a/b"), calls visit(dir, path, v2) for the process's own cgroup and each one
// above it up to the root: dir is its folder (`root`/sys/fs/cgroup[/controller for v1]/a/b), path the cgroup's own
// name ("/a/b", then "/a", then "/").
void for_each_cgroup_level(const std::string& root, std::string_view controller,
                           const std::function<void(const std::string& dir, const std::string& path, bool v2)>& visit);

}  // namespace core
