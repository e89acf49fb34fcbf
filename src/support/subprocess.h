// Running a program (host compiler, nvcc, ptxas, hipcc) and capturing what it prints.
//
// Programs are started from an argument vector, never through a shell: a path holding a quote, a space
// or a `$` (a cache directory, a temporary directory, an include directory) reaches the program as it is.
#pragma once
#include <string>
#include <vector>

namespace tl {
/// Runs argv[0] (looked up on PATH when it has no '/') with the arguments argv[1..], in the directory
/// `cwd` when it is not empty; returns its exit status (-1 when it could not start or was killed by a
/// signal) and appends what it wrote to stdout and stderr, interleaved, to `output`.
int RunCommand(const std::vector<std::string>& argv, std::string* output, const std::string& cwd = "");

/// A command line as the user writes one in CXX or a flags option ("ccache g++", "-O3 -march=native"):
/// words split at blank space. No shell syntax: quotes and `$` are ordinary characters.
std::vector<std::string> SplitWords(const std::string& text);

/// argv as one line for messages (each word that holds blank space or a quote shown in single quotes).
std::string CommandLine(const std::vector<std::string>& argv);
}  // namespace tl
