// Error discipline for the whole compiler: user errors (bad programs, bad arguments, features a
// target lacks) versus internal errors (compiler bugs). Both are C++ exceptions so that nothing
// aborts the host process; the Python binding maps each kind to its own Python exception type.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace tl {

/// Location of a construct in the user's DSL source.
struct Span {
  std::string file;
  int line = 0;
  int col = 0;  // 1-based column; 0 when unknown
  bool defined() const { return line > 0; }
};

/// Registers the text of an in-memory source (e.g. a re-parsed printed function) so that
/// diagnostics can quote its lines.
void RegisterSource(const std::string& file, const std::string& text);

/// "file:line:col" followed by the offending source line and a caret under the column.
std::string FormatSpan(const Span& span);

enum class ErrorKind { kSyntax, kType, kCompile, kArgument, kUnsupported, kResource, kLayout };

/// A mistake of the user's: the message says what, where and what to do.
class UserError : public std::runtime_error {
 public:
  UserError(ErrorKind kind, const std::string& msg, const Span& span = {})
      : std::runtime_error(Compose(msg, span)), kind_(kind), span_(span), raw_(msg) {}
  ErrorKind kind() const { return kind_; }
  const Span& span() const { return span_; }
  const std::string& raw_message() const { return raw_; }

 private:
  static std::string Compose(const std::string& msg, const Span& span);
  ErrorKind kind_;
  Span span_;
  std::string raw_;
};

/// A compiler bug. The message is marked as such so users report it instead of chasing their code.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& msg)
      : std::logic_error("internal compiler error (a TileLang-C++ bug, please report): " + msg) {}
};

namespace detail {
template <typename... Args>
std::string Concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

}  // namespace tl

#define TL_ICHECK(cond, ...)                                                                               \
  do {                                                                                                     \
    if (!(cond))                                                                                           \
      throw ::tl::InternalError(                                                                           \
          ::tl::detail::Concat(__FILE__, ":", __LINE__, ": check `", #cond, "` failed. ", ##__VA_ARGS__)); \
  } while (0)

#define TL_USER_ERROR(kind, span, ...) \
  throw ::tl::UserError(::tl::ErrorKind::kind, ::tl::detail::Concat(__VA_ARGS__), span)
