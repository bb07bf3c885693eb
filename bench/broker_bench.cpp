// cordon_broker_bench: the server and the client of bench/broker_bench.py, which measures
// filtered networking (the network broker, docs/network.md) against a direct loopback
// connection. One binary, so the client inside the sandbox and on the host is the same code.
//
//   cordon_broker_bench serve
//       Listens on 127.0.0.1 (an ephemeral port, printed on stdout as "PORT\n") and serves
//       until stdin reaches end of file. Per connection the first byte chooses:
//         'D' + 8-byte big-endian N: sends N zero bytes, then closes;
//         'U' + 8-byte big-endian N: reads N bytes, answers with the 8-byte count, closes;
//         'E': answers one byte 'e' and closes (the latency probe);
//         'S': never reads again, and closes when the client does (a stalled destination).
//   cordon_broker_bench client --to 127.0.0.1:PORT [--via PROXY] [--bytes N] [--connections M]
//       PROXY is "127.0.0.1:3128" (HTTP CONNECT over TCP) or "unix:/dev/cordon-proxy.sock"
//       (HTTP CONNECT over the unix socket); without --via the connection is direct.
//       Downloads N bytes, uploads N bytes (each on one connection), then opens M connections
//       one after another, each: connect [+ CONNECT handshake] + 1-byte echo + close.
//       Prints one JSON object: {"download_mib_s":..,"upload_mib_s":..,"latency_ms":{"median":..,
//       "p90":..,"mean":..,"min":..,"max":..},"connections":M}.
//   cordon_broker_bench stall --to 127.0.0.1:PORT [--via PROXY] --connections M
//       Opens M connections to 'S' and writes to each until the kernel takes no more (every
//       buffer on the way is full), holds them 1 s, prints {"stalled":M,"written_mib":..}.
//   cordon_broker_bench connect --to 127.0.0.1:PORT
//       One direct connect; prints "connected" or "refused ERRNO_NAME" (the confinement check).
// Exit status: 0 on success, 1 on a failed transfer, 2 on usage errors.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kBuffer = 256 * 1024;

double now_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "cordon_broker_bench: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

bool write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void put_u64(unsigned char* out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<unsigned char>(v & 0xff);
    v >>= 8;
  }
}

std::uint64_t get_u64(const unsigned char* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | in[i];
  return v;
}

void no_delay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// ----------------------------------------------------------------------------- server

void serve_connection(int c) {
  no_delay(c);
  unsigned char command = 0;
  if (!read_all(c, &command, 1)) {
    ::close(c);
    return;
  }
  if (command == 'E') {
    const char reply = 'e';
    write_all(c, &reply, 1);
  } else if (command == 'S') {
    // Reads nothing more; POLLRDHUP (not POLLIN) wakes it when the client closes.
    pollfd p{c, POLLRDHUP, 0};
    while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    ::close(c);
    return;
  } else if (command == 'D' || command == 'U') {
    unsigned char header[8];
    if (read_all(c, header, sizeof header)) {
      std::uint64_t left = get_u64(header);
      std::vector<char> buffer(kBuffer, 0);
      if (command == 'D') {
        while (left > 0) {
          const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
          if (!write_all(c, buffer.data(), chunk)) break;
          left -= chunk;
        }
      } else {
        std::uint64_t got = 0;
        while (got < left) {
          const ssize_t n = ::recv(c, buffer.data(), buffer.size(), 0);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) break;
          got += static_cast<std::uint64_t>(n);
        }
        unsigned char count[8];
        put_u64(count, got);
        write_all(c, count, sizeof count);
      }
    }
  }
  ::shutdown(c, SHUT_WR);
  char sink[256];
  while (::recv(c, sink, sizeof sink, 0) > 0) {
  }
  ::close(c);
}

int serve() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 1024) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    die("bind 127.0.0.1");
  }
  std::printf("%d\n", ntohs(a.sin_port));
  std::fflush(stdout);
  pollfd fds[2] = {{fd, POLLIN, 0}, {0, POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (fds[1].revents != 0) {
      char b[64];
      if (::read(0, b, sizeof b) <= 0) break;  // the harness closed our stdin: done
    }
    if (fds[0].revents & POLLIN) {
      const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c >= 0) std::thread(serve_connection, c).detach();
    }
  }
  ::close(fd);
  return 0;
}

// ----------------------------------------------------------------------------- client

struct endpoint {
  bool unix_socket = false;
  std::string host;  // IPv4 literal, or the socket path
  int port = 0;
};

bool parse_endpoint(const std::string& text, endpoint& out) {
  if (text.rfind("unix:", 0) == 0) {
    out.unix_socket = true;
    out.host = text.substr(5);
    return !out.host.empty();
  }
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  out.host = text.substr(0, colon);
  out.port = std::atoi(text.c_str() + colon + 1);
  in_addr ignored{};
  return out.port > 0 && out.port < 65536 && ::inet_pton(AF_INET, out.host.c_str(), &ignored) == 1;
}

// Connects; returns the socket, or -1 with errno set.
int dial(const endpoint& e) {
  if (e.unix_socket) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", e.host.c_str());
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      const int err = errno;
      if (fd >= 0) ::close(fd);
      errno = err;
      return -1;
    }
    return fd;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(e.port));
  ::inet_pton(AF_INET, e.host.c_str(), &a.sin_addr);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    errno = err;
    return -1;
  }
  no_delay(fd);
  return fd;
}

// A connection to `to`, directly or through an HTTP CONNECT tunnel at `via`.
int open_to(const endpoint& to, const endpoint* via) {
  if (via == nullptr) {
    const int fd = dial(to);
    if (fd < 0) die("connect " + to.host + ":" + std::to_string(to.port));
    return fd;
  }
  const int fd = dial(*via);
  if (fd < 0) die("connect to the proxy " + via->host);
  const std::string target = to.host + ":" + std::to_string(to.port);
  const std::string request = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n";
  if (!write_all(fd, request.data(), request.size())) die("send CONNECT");
  // Read the answer head and nothing after it (that belongs to the tunnel): peek, then
  // consume exactly the head.
  std::string head;
  char peeked[8192];
  for (;;) {
    const ssize_t n = ::recv(fd, peeked, sizeof peeked, MSG_PEEK);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("read the CONNECT answer");
    const std::string seen(peeked, static_cast<std::size_t>(n));
    const auto end = seen.find("\r\n\r\n");
    if (end != std::string::npos) {
      head = seen.substr(0, end + 4);
      if (!read_all(fd, peeked, head.size())) die("read the CONNECT answer");
      break;
    }
    if (n == static_cast<ssize_t>(sizeof peeked)) die("CONNECT answer too long");
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 10);  // more of the head is on its way
  }
  if (head.rfind("HTTP/1.1 200", 0) != 0 && head.rfind("HTTP/1.0 200", 0) != 0) {
    std::fprintf(stderr, "cordon_broker_bench: CONNECT %s refused: %s\n", target.c_str(),
                 head.substr(0, head.find('\r')).c_str());
    std::exit(1);
  }
  return fd;
}

double download(const endpoint& to, const endpoint* via, std::uint64_t bytes) {
  const double t0 = now_s();
  const int fd = open_to(to, via);
  unsigned char header[9] = {'D'};
  put_u64(header + 1, bytes);
  if (!write_all(fd, header, sizeof header)) die("send");
  std::vector<char> buffer(kBuffer);
  std::uint64_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("download ended after " + std::to_string(got) + " bytes");
    got += static_cast<std::uint64_t>(n);
  }
  const double t1 = now_s();
  ::close(fd);
  return static_cast<double>(bytes) / (1024.0 * 1024.0) / (t1 - t0);
}

double upload(const endpoint& to, const endpoint* via, std::uint64_t bytes) {
  const double t0 = now_s();
  const int fd = open_to(to, via);
  unsigned char header[9] = {'U'};
  put_u64(header + 1, bytes);
  if (!write_all(fd, header, sizeof header)) die("send");
  std::vector<char> buffer(kBuffer, 0);
  std::uint64_t left = bytes;
  while (left > 0) {
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
    if (!write_all(fd, buffer.data(), chunk)) die("upload");
    left -= chunk;
  }
  unsigned char count[8];
  if (!read_all(fd, count, sizeof count) || get_u64(count) != bytes) die("upload was not confirmed");
  const double t1 = now_s();
  ::close(fd);
  return static_cast<double>(bytes) / (1024.0 * 1024.0) / (t1 - t0);
}

// One connection: connect [+ CONNECT] + 1-byte echo + close, in milliseconds.
double echo_once(const endpoint& to, const endpoint* via) {
  const double t0 = now_s();
  const int fd = open_to(to, via);
  const char ping = 'E';
  char pong = 0;
  if (!write_all(fd, &ping, 1) || !read_all(fd, &pong, 1) || pong != 'e') die("echo");
  ::close(fd);
  return (now_s() - t0) * 1e3;
}

// M stalled connections, each filled until nothing more is taken; MiB written in all.
double stall(const endpoint& to, const endpoint* via, long connections) {
  std::vector<int> fds;
  for (long i = 0; i < connections; ++i) {
    const int fd = open_to(to, via);
    const char command = 'S';
    if (!write_all(fd, &command, 1)) die("send");
    fds.push_back(fd);
  }
  std::vector<char> chunk(64 * 1024, 's');
  std::uint64_t written = 0;
  for (int round = 0; round < 100; ++round) {
    std::uint64_t moved = 0;
    for (int fd : fds) {
      for (;;) {
        const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n <= 0) break;
        moved += static_cast<std::uint64_t>(n);
      }
    }
    written += moved;
    if (moved == 0 && round > 2) break;
    ::usleep(20000);
  }
  ::sleep(1);  // the broker samples its memory every 100 ms
  for (int fd : fds) ::close(fd);
  return static_cast<double>(written) / (1024.0 * 1024.0);
}

int usage() {
  std::fprintf(stderr,
               "usage: cordon_broker_bench serve\n"
               "       cordon_broker_bench client --to 127.0.0.1:PORT [--via 127.0.0.1:3128|unix:PATH] "
               "[--bytes N] [--connections M]\n"
               "       cordon_broker_bench stall --to 127.0.0.1:PORT [--via PROXY] --connections M\n"
               "       cordon_broker_bench connect --to 127.0.0.1:PORT\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string mode = argv[1];
  if (mode == "serve") return argc == 2 ? serve() : usage();
  endpoint to, via;
  bool have_to = false, have_via = false;
  std::uint64_t bytes = 0;
  long connections = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string value = argv[++i];
    if (arg == "--to") {
      have_to = parse_endpoint(value, to) && !to.unix_socket;
      if (!have_to) return usage();
    } else if (arg == "--via") {
      have_via = parse_endpoint(value, via);
      if (!have_via) return usage();
    } else if (arg == "--bytes") {
      bytes = std::strtoull(value.c_str(), nullptr, 10);
    } else if (arg == "--connections") {
      connections = std::strtol(value.c_str(), nullptr, 10);
    } else {
      return usage();
    }
  }
  if (!have_to) return usage();
  if (mode == "connect") {
    const int fd = dial(to);
    if (fd >= 0) {
      std::printf("connected\n");
      ::close(fd);
    } else {
      const char* name = errno == EACCES ? "EACCES" : errno == ECONNREFUSED ? "ECONNREFUSED"
                         : errno == ENETUNREACH ? "ENETUNREACH" : errno == EAFNOSUPPORT ? "EAFNOSUPPORT"
                         : errno == EPERM ? "EPERM" : "other";
      std::printf("refused %s\n", name);
    }
    return 0;
  }
  const endpoint* through = have_via ? &via : nullptr;
  if (mode == "stall") {
    const double mib = stall(to, through, connections);
    std::printf("{\"stalled\":%ld,\"written_mib\":%.1f}\n", connections, mib);
    return 0;
  }
  if (mode != "client") return usage();
  double down = 0, up = 0;
  if (bytes > 0) {
    down = download(to, through, bytes);
    up = upload(to, through, bytes);
  }
  std::vector<double> latency;
  latency.reserve(static_cast<std::size_t>(std::max(connections, 0L)));
  for (long i = 0; i < connections; ++i) latency.push_back(echo_once(to, through));
  std::sort(latency.begin(), latency.end());
  auto at = [&](double q) {
    if (latency.empty()) return 0.0;
    const auto index = static_cast<std::size_t>(q * static_cast<double>(latency.size() - 1) + 0.5);
    return latency[std::min(index, latency.size() - 1)];
  };
  double sum = 0;
  for (double v : latency) sum += v;
  const double mean = latency.empty() ? 0.0 : sum / static_cast<double>(latency.size());
  std::printf("{\"download_mib_s\":%.1f,\"upload_mib_s\":%.1f,\"bytes\":%llu,\"connections\":%ld,"
              "\"latency_ms\":{\"median\":%.4f,\"p90\":%.4f,\"mean\":%.4f,\"min\":%.4f,\"max\":%.4f}}\n",
              down, up, static_cast<unsigned long long>(bytes), connections, at(0.5), at(0.9), mean, at(0.0),
              at(1.0));
  return 0;
}
