// Prepared sandboxes, the host's side (cordon/prepared.h, docs/prepared.md).
// The helper is started as start_run() starts it (posix/helper_spawn.h)
// with /dev/null on its standard descriptors and a "prepare" request; it
// answers {"ready": "<UTC>"} once PID 1 waits, and after the command (one
// JSON line with its three descriptors attached, SCM_RIGHTS) the run goes on
// as any run: cancel is a byte on the socket, the report its last line.
#include "cordon/prepared.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>
#include <nlohmann/json.hpp>

#include "cordon/backend.h"
#include "cordon/selection.h"
#include "core/outcome_json.h"
#include "core/pool_scan_hooks.h"
#include "cordon/report.h"
#include "posix/byte_strings.h"
#include "posix/helper_spawn.h"
#include "posix/poll_timeout.h"
#include "posix/scm_rights.h"
#include "posix/socket_io.h"
#include "posix/unique_fd.h"

namespace cordon {

struct prepared_sandbox::state {
  ~state() { posix::release_helper(helper); }  // a sandbox never started: the helper leaves once control closes
  posix::helper_process helper;
  unique_fd control;
  std::string fingerprint;
  // The plan it was prepared from, by identity (unique in this process, never
  // reused; a plan is immutable): start() with that same plan needs no second
  // fingerprint (a policy to JSON and a SHA-256 on the critical path).
  std::uint64_t plan_identity = 0;
  std::uint64_t plan_process_token = 0;
  std::string received;  // the helper's bytes not yet parsed
  bool ready = false;
  std::string prepared_at;
  std::chrono::steady_clock::time_point ready_since;
  std::optional<error> failure;
  bool used = false;
  // The pool's process checks after the run (prepared_pool::start with a
  // plan compiled now): the helper is told to leave it, and the run's
  // report goes through `after_report` (posix/helper_spawn.h).
  std::function<void(run_report&)> after_report;
};

prepared_sandbox::prepared_sandbox(std::unique_ptr<state> s) : state_(std::move(s)) {}
prepared_sandbox::prepared_sandbox(prepared_sandbox&&) noexcept = default;
prepared_sandbox& prepared_sandbox::operator=(prepared_sandbox&&) noexcept = default;
prepared_sandbox::~prepared_sandbox() = default;  // closing the socket gives the sandbox up

result<prepared_sandbox> prepared_sandbox::prepare(const sandbox_plan& plan, const prepare_options& options) {
  if (plan.backend() == nullptr) return make_error(error_code::plan_null, "the plan has no backend");
  if (plan.backend()->name() == host_execution_backend_name) {
    return make_error(error_code::usage_error,
                      "a host-execution plan (sandbox forbidden) has no sandbox to prepare; start it with start_run");
  }
  auto s = std::make_unique<state>();
  s->fingerprint = plan_fingerprint(plan);
  s->plan_identity = plan.identity();
  s->plan_process_token = plan.process_token();
  unique_fd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!null) return make_error(error_code::launch_failed, "open /dev/null", {}, errno);
  unique_fd high(::fcntl(null.get(), F_DUPFD_CLOEXEC, 10));
  if (!high) return make_error(error_code::launch_failed, "fcntl", {}, errno);
  auto helper_control = posix::control_pair(s->control);
  if (!helper_control) return std::move(helper_control).error_value();
  const int sources[4] = {high.get(), high.get(), high.get(), helper_control->get()};
  auto helper = posix::spawn_helper(posix::supervisor_path(options.supervisor_path), sources);
  if (!helper) return std::move(helper).error_value();
  s->helper = std::move(*helper);
  nlohmann::json line = posix::plan_request(plan);
  line["prepare"] = true;
  if (!send_all(s->control.get(), posix::json_line(line))) {
    // The helper is already gone: wait_ready() reads why.
  }
  return prepared_sandbox(std::move(s));
}

namespace {

// The helper's answer is one short JSON line (src/supervisor/main.cpp); a
// longer one is not from a cordon-supervisor of this version.
constexpr std::size_t max_answer_bytes = 64 * 1024;

// Takes the helper's answer line `j`: ready, a failure, or (anything else, a
// wrong CORDON_SUPERVISOR or another version) launch_failed. Never throws:
// a host's pool thread must not std::terminate on what a helper sent.
void read_answer(prepared_sandbox::state& s, const nlohmann::json& j) {
  const char* const malformed = "the supervisor helper answered what is not a prepared sandbox";
  try {
    if (j.is_object() && j.contains("ready")) {
      s.prepared_at = j.at("ready").get<std::string>();
      s.ready = true;
      s.ready_since = std::chrono::steady_clock::now();
    } else if (j.is_object() && j.contains("failure")) {
      s.failure = core::error_from_json(j.at("failure"));
    } else {
      s.failure = make_error(error_code::launch_failed, malformed);
    }
  } catch (const nlohmann::json::exception& e) {
    s.failure = make_error(error_code::launch_failed, std::string(malformed) + " (" + e.what() + ")");
  }
}

// Reads the helper's answer to "prepare" until it is ready, failed, or
// `deadline` passes.
result<bool> await_ready(prepared_sandbox::state& s, std::chrono::steady_clock::time_point deadline) {
  while (!s.ready && !s.failure) {
    auto newline = s.received.find('\n');
    if (newline != std::string::npos) {
      nlohmann::json j = nlohmann::json::parse(s.received.substr(0, newline), nullptr, false);
      s.received.erase(0, newline + 1);
      read_answer(s, j);
      continue;
    }
    if (s.received.size() > max_answer_bytes) {
      s.failure = make_error(error_code::launch_failed, "the supervisor helper's answer is longer than a line may be");
      break;
    }
    pollfd fd{s.control.get(), POLLIN, 0};
    int ready = ::poll(&fd, 1, poll_timeout_until(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return false;
    char buffer[4096];
    ssize_t n = ::recv(s.control.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      s.failure = make_error(error_code::launch_failed,
                             "the supervisor helper ended without preparing; is it installed? (CORDON_SUPERVISOR)");
      break;
    }
    s.received.append(buffer, static_cast<std::size_t>(n));
  }
  if (s.failure) return *s.failure;
  return true;
}

}  // namespace

result<bool> prepared_sandbox::wait_ready(std::chrono::steady_clock::time_point deadline) {
  if (!state_) return make_error(error_code::usage_error, "a prepared sandbox is used once; this one was used already");
  return await_ready(*state_, deadline);
}

bool prepared_sandbox::ready() const noexcept { return state_ && state_->ready && !state_->failure; }
const std::string& prepared_sandbox::prepared_at() const noexcept {
  static const std::string none;
  return state_ ? state_->prepared_at : none;
}
const std::string& prepared_sandbox::fingerprint() const noexcept {
  static const std::string none;
  return state_ ? state_->fingerprint : none;
}
std::chrono::steady_clock::time_point prepared_sandbox::ready_since() const noexcept {
  return state_ ? state_->ready_since : std::chrono::steady_clock::time_point{};
}

result<run_handle> prepared_sandbox::start(const sandbox_plan& plan, const run_request& request) {
  if (!state_ || state_->used) {
    return make_error(error_code::usage_error, "a prepared sandbox is used once; this one was used already");
  }
  // Whatever happens next, this sandbox is spent: closing the socket on
  // return (unless the run took it) makes the helper give it up.
  std::unique_ptr<state> spent = std::move(state_);
  state& s = *spent;
  s.used = true;
  if (request.launch.argv.empty() || request.launch.argv[0].empty()) {
    return make_error(error_code::usage_error, "no command to run");
  }
  const bool same_plan = plan.identity() == s.plan_identity && plan.process_token() == s.plan_process_token;
  if (!same_plan && plan_fingerprint(plan) != s.fingerprint) {
    return make_error(error_code::plan_stale,
                      "the sandbox was prepared for another plan (the policy or a host fact changed); prepare again");
  }
  auto ready = await_ready(s, std::chrono::steady_clock::now() + std::chrono::seconds(30));
  if (!ready) return std::move(ready).error_value();
  if (!*ready) return make_error(error_code::launch_failed, "the prepared sandbox was not ready within 30 s");
  auto run = std::make_unique<run_handle::state>();
  auto in = posix::stdio_source(request.stdin_spec, 0, true, run->stdin_pipe);
  if (!in) return std::move(in).error_value();
  auto out = posix::stdio_source(request.stdout_spec, 1, false, run->stdout_pipe);
  if (!out) return std::move(out).error_value();
  auto err = posix::stdio_source(request.stderr_spec, 2, false, run->stderr_pipe);
  if (!err) return std::move(err).error_value();
  nlohmann::json line = {{"argv", posix::byte_strings_json(request.launch.argv)},
                         {"working_directory", request.launch.working_directory},
                         {"environment", posix::byte_strings_json(request.launch.host_environment)}};
  if (s.after_report) line["host_checks"] = true;
  const int fds[3] = {in->get(), out->get(), err->get()};
  if (!send_with_descriptors(s.control.get(), posix::json_line(line), fds, 3)) {
    return make_error(error_code::launch_failed, "the prepared sandbox's helper is gone", {}, errno);
  }
  run->after_report = std::move(s.after_report);
  run->helper = std::move(s.helper);
  run->control = std::move(s.control);
  run->received = std::move(s.received);
  return run_handle(std::move(run));
}

// The pool: ready sandboxes for the current plan, and a thread that keeps
// `size` of them (one preparation at a time: each is a helper and a tree).
// A replacement waits while a run just started is still going, up to
// options.refill_after: preparing is a process start, a compile and a
// clone, and on a small machine it would take the CPU the command's own
// critical path needs (docs/prepared.md, "The pool").
struct prepared_pool::impl {
  pool_options options;
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::shared_ptr<const sandbox_plan> plan;
  std::uint64_t generation = 0;  // bumped by update(): preparations of an older plan are dropped
  std::deque<prepared_sandbox> ready;
  std::optional<error> last_failure;  // of the last preparation
  bool stale = false;                 // a helper found the host changed: refill stops until update()
  bool stopping = false;
  // Runs started lately: their helpers' pidfds (readable once a helper has
  // exited, i.e. its run is over), the starts still sending their command,
  // and until when a refill waits for them. Only run() closes the pidfds.
  std::vector<unique_fd> running;
  int starting = 0;
  std::uint64_t preparations = 0;  // preparations_started()
  std::uint64_t deferred = 0;      // refills_deferred()
  std::chrono::steady_clock::time_point quiet_until{};
  unique_fd wake{::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};  // ends a refill's wait early (stop, update)
  // The watch sets of the plan's writable roots in this process
  // (core/pool_scan_hooks.h), opened by the refill thread for the plan of
  // `watched_generation`; null until then, or when the backend keeps none.
  std::shared_ptr<void> watches;
  std::uint64_t watched_generation = ~0ull;
  std::thread refill;

  void drop_old(std::unique_lock<std::mutex>&) {
    auto now = std::chrono::steady_clock::now();
    while (!ready.empty() && now - ready.front().ready_since() > options.max_age) ready.pop_front();
  }

  void poke() {
    std::uint64_t one = 1;
    if (wake && ::write(wake.get(), &one, sizeof one) < 0) { /* already poked: the counter is nonzero */ }
    changed.notify_all();
  }

  // Whether a refill must wait for a run started lately; when so, waits (the
  // lock released) until one of them ends, the quiet time is over, or
  // poke(), and returns true so that the caller looks again.
  bool wait_for_quiet(std::unique_lock<std::mutex>& lock) {
    auto now = std::chrono::steady_clock::now();
    if (now >= quiet_until) {
      running.clear();
      return false;
    }
    std::vector<pollfd> fds;
    for (const auto& pidfd : running) fds.push_back({pidfd.get(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 0) > 0) {
      std::erase_if(running, [&](const unique_fd& pidfd) {
        for (const auto& p : fds) {
          if (p.fd == pidfd.get()) return p.revents != 0;
        }
        return false;
      });
    }
    if (starting == 0 && running.empty()) return false;
    ++deferred;
    // A start still sending its command has no pidfd here yet: look again
    // in a millisecond.
    const int timeout_ms = starting > 0 ? 1 : static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(quiet_until - now).count());
    fds.clear();
    for (const auto& pidfd : running) fds.push_back({pidfd.get(), POLLIN, 0});
    fds.push_back({wake.get(), POLLIN, 0});
    lock.unlock();
    if (::poll(fds.data(), fds.size(), timeout_ms) > 0 && (fds.back().revents & POLLIN)) {
      std::uint64_t count;
      if (::read(wake.get(), &count, sizeof count) < 0) { /* drained already */ }
    }
    lock.lock();
    return true;
  }

  // Waits up to 30 s for `made` to be ready, in 100 ms slices, so that the
  // destructor and update() never wait for a slow or hung helper: false
  // (not ready) as soon as the pool stops or the plan changes.
  result<bool> await_ready_or_stop(prepared_sandbox& made, std::uint64_t for_generation) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (true) {
      const auto slice = std::min(until, std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
      auto ready_now = made.wait_ready(slice);
      if (!ready_now || *ready_now || std::chrono::steady_clock::now() >= until) return ready_now;
      std::lock_guard<std::mutex> lock(mutex);
      if (stopping || generation != for_generation) return false;
    }
  }

  // Opens the watch sets of `for_plan` (the lock released: it lists every
  // directory of the roots), off every call's path.
  void open_watches(std::unique_lock<std::mutex>& lock, const std::shared_ptr<const sandbox_plan>& for_plan,
                    std::uint64_t for_generation) {
    auto open = core::process_pool_scan_hooks().open.load();
    std::shared_ptr<void> previous = std::move(watches);
    lock.unlock();
    previous.reset();  // a root of the old plan only is closed before the new sets are listed
    std::shared_ptr<void> opened = open != nullptr ? open(*for_plan) : nullptr;
    lock.lock();
    watches = std::move(opened);
    watched_generation = for_generation;
  }

  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping) {
      drop_old(lock);
      if (stale || ready.size() >= options.size) {
        changed.wait_for(lock, options.max_age / 2 + std::chrono::milliseconds(1));
        continue;
      }
      if (wait_for_quiet(lock)) continue;
      auto for_plan = plan;
      const std::uint64_t for_generation = generation;
      if (watched_generation != for_generation) {
        open_watches(lock, for_plan, for_generation);
      } else if (auto repair = core::process_pool_scan_hooks().repair.load(); repair != nullptr && watches) {
        auto held = watches;  // a set in doubt opened again, off the call's path
        lock.unlock();
        repair(held.get());
        lock.lock();
      }
      ++preparations;
      lock.unlock();
      prepare_options prepare;
      prepare.supervisor_path = options.supervisor_path;
      auto made = prepared_sandbox::prepare(*for_plan, prepare);
      std::optional<error> failure;
      if (made) {
        auto ready_now = await_ready_or_stop(*made, for_generation);
        if (!ready_now) failure = std::move(ready_now).error_value();
        else if (!*ready_now) failure = make_error(error_code::launch_failed, "a prepared sandbox was not ready within 30 s");
      } else {
        failure = std::move(made).error_value();
      }
      lock.lock();
      if (stopping) break;
      if (for_generation != generation) continue;  // prepared for a plan given up meanwhile
      if (failure) {
        last_failure = failure;
        if (failure->code == error_code::plan_stale) {
          stale = true;  // fail closed: no sandbox of this plan may be used any more
          ready.clear();
        } else {
          changed.wait_for(lock, std::chrono::milliseconds(200));  // do not spin on a failing host
        }
      } else {
        ready.push_back(std::move(*made));
        last_failure.reset();
      }
      changed.notify_all();
    }
    ready.clear();
  }
};

prepared_pool::prepared_pool(std::shared_ptr<const sandbox_plan> plan, const pool_options& options)
    : impl_(std::make_unique<impl>()) {
  impl_->options = options;
  impl_->plan = std::move(plan);
  impl_->refill = std::thread([this] { impl_->run(); });
}

prepared_pool::~prepared_pool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->poke();
  impl_->refill.join();
}

result<run_handle> prepared_pool::start(const run_request& request) { return start(request, nullptr); }

result<run_handle> prepared_pool::start(const run_request& request, std::shared_ptr<const sandbox_plan> compiled_now) {
  std::unique_lock<std::mutex> lock(impl_->mutex);
  auto until = std::chrono::steady_clock::now() + impl_->options.wait;
  while (true) {
    impl_->drop_old(lock);
    if (impl_->stale) {
      return make_error(error_code::plan_stale, "the host changed since the pool's plan was compiled (" +
                                                    impl_->last_failure->message + "); refresh() or update() the pool");
    }
    if (!impl_->ready.empty()) break;
    // A plan that can never be prepared (a host-execution one): no waiting.
    if (impl_->last_failure && impl_->last_failure->code == error_code::usage_error) return *impl_->last_failure;
    if (impl_->changed.wait_until(lock, until) == std::cv_status::timeout && impl_->ready.empty()) {
      if (!impl_->last_failure) return make_error(error_code::launch_failed, "no prepared sandbox became ready in time");
      // The last preparation's errno and blockers say why; the code stays launch_failed (prepared.h).
      error why = *impl_->last_failure;
      why.message = "no prepared sandbox became ready in time: " + why.describe();
      why.code = error_code::launch_failed;
      return why;
    }
  }
  prepared_sandbox sandbox = std::move(impl_->ready.front());
  impl_->ready.pop_front();
  auto plan = impl_->plan;
  auto check = core::process_pool_scan_hooks().check.load();
  // Only a plan with the pool's fingerprint (its scan is of the roots the
  // sandbox was built for): any other leaves the check to the helper.
  if (compiled_now && impl_->watches && impl_->watched_generation == impl_->generation && check != nullptr &&
      (compiled_now == plan || plan_fingerprint(*compiled_now) == sandbox.fingerprint())) {
    // The sets stay open until the check is made, whatever the pool does meanwhile.
    sandbox.state_->after_report = [check, watches = impl_->watches, compiled_now,
                                    launch = request.launch](run_report& report) {
      if (!report.outcome) return;  // no command ran: nothing to check
      check(*compiled_now, *report.outcome);
      report.json = run_report_json(*compiled_now, launch, *report.outcome);
    };
  }
  const bool quiet = impl_->options.refill_after.count() > 0;
  if (quiet) {
    ++impl_->starting;
    impl_->quiet_until =
        std::max(impl_->quiet_until, std::chrono::steady_clock::now() + impl_->options.refill_after);
  }
  lock.unlock();
  auto started = sandbox.start(*plan, request);
  if (quiet) {
    // The helper is not this process's child (posix/helper_spawn.h); a pidfd
    // still says when it exits. Without one (it is gone already) nothing waits.
    unique_fd pidfd;
    if (started) pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, started->pid(), 0)));
    lock.lock();
    --impl_->starting;
    if (pidfd) impl_->running.push_back(std::move(pidfd));
    lock.unlock();
  }
  impl_->changed.notify_all();  // refill
  return started;
}

void prepared_pool::update(std::shared_ptr<const sandbox_plan> plan) {
  std::deque<prepared_sandbox> given_up;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->plan = std::move(plan);
    ++impl_->generation;
    impl_->stale = false;
    impl_->last_failure.reset();
    given_up.swap(impl_->ready);
  }
  impl_->changed.notify_all();
}

result<bool> prepared_pool::refresh() {
  auto current = this->plan();
  compile_options options;
  options.workspace = current->workspace();
  options.cgroup_parent = current->cgroup_parent();
  auto compiled = current->backend()->compile(current->policy(), options);
  if (!compiled) {
    update(current);  // nothing prepared for a plan this host refuses now may run
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stale = true;
    impl_->last_failure = compiled.failure();
    return compiled.failure();
  }
  if (plan_fingerprint(*compiled.plan()) == plan_fingerprint(*current)) {
    // The host is as the plan says again (a preparation found it changed, and
    // it changed back): preparing may resume. A preparation that still finds
    // a difference makes the pool stale again.
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      if (!impl_->stale) return false;
      impl_->stale = false;
      impl_->last_failure.reset();
    }
    impl_->changed.notify_all();
    return false;
  }
  update(compiled.plan());
  return true;
}

std::uint64_t prepared_pool::preparations_started() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->preparations;
}

std::uint64_t prepared_pool::refills_deferred() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->deferred;
}

std::size_t prepared_pool::ready_count() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->ready.size();
}

std::shared_ptr<const sandbox_plan> prepared_pool::plan() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->plan;
}

}  // namespace cordon
