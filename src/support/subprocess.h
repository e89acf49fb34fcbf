// Running a shell command (host compiler, nvcc, ptxas) and capturing what it prints.
#pragma once
#include <string>

namespace tl {
/// Runs `cmd` through the shell; returns its exit status (-1 when it could not run or was killed)
/// and appends its stdout and stderr to `output`.
int RunCommand(const std::string& cmd, std::string* output);
}  // namespace tl
