// Starts a program from an argument vector with fork/exec and collects its stdout and stderr from one pipe.
#include "support/subprocess.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace tl {

int RunCommand(const std::vector<std::string>& argv, std::string* output, const std::string& cwd) {
  if (argv.empty()) return -1;
  // Everything the child needs is built before fork(): between fork and exec a child of a threaded
  // process may only make async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string cannot_cd = "cannot enter the directory " + cwd + "\n";
  const std::string cannot_run = "cannot run " + argv[0] + ": ";
  int fds[2];
  if (pipe(fds) != 0) return -1;
  // close-on-exec: a compiler started by another thread at the same time must not hold this pipe open
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
      ssize_t ignored = write(STDERR_FILENO, cannot_cd.data(), cannot_cd.size());
      (void)ignored;
      _exit(127);
    }
    execvp(args[0], args.data());
    const char* why = strerror(errno);
    ssize_t ignored = write(STDERR_FILENO, cannot_run.data(), cannot_run.size());
    ignored = write(STDERR_FILENO, why, strlen(why));
    ignored = write(STDERR_FILENO, "\n", 1);
    (void)ignored;
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n > 0) {
      output->append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> SplitWords(const std::string& text) {
  std::istringstream is(text);
  std::vector<std::string> words;
  std::string w;
  while (is >> w) words.push_back(w);
  return words;
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) {
    if (!line.empty()) line += ' ';
    if (a.find_first_of(" \t\n'\"$\\") == std::string::npos && !a.empty()) {
      line += a;
      continue;
    }
    line += '\'';
    for (char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace tl
