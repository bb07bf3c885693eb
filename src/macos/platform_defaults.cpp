// platform_defaults.cpp — the lists of platform_defaults.h.
#include "macos/platform_defaults.h"

namespace cordon::macos_impl {

const std::vector<default_path>& platform_read_defaults() {
  static const std::vector<default_path> paths = {
      {"/System", true, "frameworks, the dyld shared cache and cryptexes"},
      {"/usr/lib", true, "libSystem and the dynamic loader"},
      {"/usr/libexec", true, "helpers that system tools exec"},
      {"/usr/share", true, "locale, terminfo and zoneinfo data"},
      {"/usr/bin", true, "system tools"},
      {"/usr/sbin", true, "system tools"},
      {"/bin", true, "the shells and core tools"},
      {"/sbin", true, "core tools"},
      {"/private/etc", true, "hosts, passwd, shells and other system configuration"},
      {"/private/var/db/timezone", true, "the time zone database /etc/localtime points to"},
      {"/private/var/select/sh", false, "the link /bin/sh reads to choose its shell"},
      {"/", false, "the root directory itself (its entries, not below): dyld and getcwd(3) read it before main"},
      {"/private/var/db/DarwinDirectory/local/recordStore.data", false,
       "the local directory records libinfo reads for getpwuid(3) on recent macOS"},
      {"/Library/Apple", true, "Rosetta and Apple's system extensions on Apple silicon"},
      {"/private/var/db/xcode_select_link", false,
       "the link /usr/bin/git, clang, make and python3 (xcode-select shims) read to find the developer tools"},
      {"/Library/Developer/CommandLineTools", true, "the developer tools the /usr/bin shims run (Command Line Tools)"},
      {"/Applications/Xcode.app", true, "the developer tools the /usr/bin shims run (Xcode)"},
      {"/opt/homebrew", true, "Homebrew's prefix on Apple silicon (when present)"},
      {"/usr/local/bin", true, "Homebrew's prefix on Intel (when present): programs"},
      {"/usr/local/sbin", true, "Homebrew's prefix on Intel: programs"},
      {"/usr/local/lib", true, "Homebrew's prefix on Intel: libraries"},
      {"/usr/local/include", true, "Homebrew's prefix on Intel: headers"},
      {"/usr/local/share", true, "Homebrew's prefix on Intel: data"},
      {"/usr/local/opt", true, "Homebrew's prefix on Intel: links to installed formulae"},
      {"/usr/local/Cellar", true, "Homebrew's prefix on Intel: installed formulae"},
      {"/usr/local/Homebrew", true, "Homebrew's prefix on Intel: Homebrew itself"},
      {"/usr/local/etc", true, "Homebrew's prefix on Intel: formulae configuration (CA bundles)"},
      {"/dev/null", false, "the null device"},
      {"/dev/zero", false, "the zero device"},
      {"/dev/random", false, "randomness"},
      {"/dev/urandom", false, "randomness"},
      {"/dev/fd", true, "a process's own descriptors"},
  };
  return paths;
}

const std::vector<default_path>& platform_write_defaults() {
  static const std::vector<default_path> paths = {
      {"/dev/null", false, "discarded output"},
      {"/dev/fd", true, "a process's own descriptors (/dev/stdout, /dev/fd/N)"},
  };
  return paths;
}

const std::vector<std::string>& platform_metadata_literals() {
  static const std::vector<std::string> paths = {
      "/",        "/private",   "/var",   "/tmp",   "/etc",   "/private/var",   "/private/tmp",
      // The parents of the read defaults above, for realpath(3) and the loader.
      "/usr",     "/usr/local", "/opt",   "/Library",   "/Library/Developer",   "/Applications",
      "/private/var/db",        "/private/var/db/DarwinDirectory",   "/private/var/db/DarwinDirectory/local",
  };
  return paths;
}

std::vector<std::string> mach_services_for(network_mode mode) {
  std::vector<std::string> names = {
      "com.apple.system.opendirectoryd.libinfo",     // getpwuid(3), getgrgid(3)
      "com.apple.system.opendirectoryd.membership",  // group membership checks
      "com.apple.system.logger",                     // asl/syslog
      "com.apple.logd",                              // os_log
      "com.apple.system.notification_center",        // notify(3): time zone and locale changes
      "com.apple.bsd.dirhelper",                     // confstr(_CS_DARWIN_USER_TEMP_DIR)
      "com.apple.cfprefsd.daemon",                   // CFPreferences reads of system defaults
  };
  if (mode != network_mode::denied) {
    names.push_back("com.apple.trustd.agent");  // TLS certificate evaluation (through the broker too)
  }
  if (mode == network_mode::unrestricted) {
    names.push_back("com.apple.dnssd.service");                // getaddrinfo(3) through mDNSResponder
    names.push_back("com.apple.SystemConfiguration.configd");  // resolver and proxy configuration
  }
  return names;
}

const std::vector<std::string>& sysctl_read_names() {
  static const std::vector<std::string> names = {
      "hw.activecpu",      "hw.byteorder",       "hw.cachelinesize",    "hw.cputype",
      "hw.cpusubtype",     "hw.logicalcpu",      "hw.logicalcpu_max",   "hw.machine",
      "hw.memsize",        "hw.ncpu",            "hw.nperflevels",      "hw.pagesize",
      "hw.physicalcpu",    "hw.physicalcpu_max", "kern.argmax",         "kern.hostname",
      "kern.maxfilesperproc", "kern.osproductversion", "kern.osrelease", "kern.ostype",
      "kern.osversion",    "kern.version",       "kern.usrstack64",     "sysctl.proc_cputype",
      "vm.loadavg",
  };
  return names;
}

const std::vector<std::string>& sysctl_read_prefixes() {
  static const std::vector<std::string> prefixes = {"hw.optional.", "hw.perflevel"};
  return prefixes;
}

}  // namespace cordon::macos_impl
