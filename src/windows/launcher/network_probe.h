// src/windows/launcher/network_probe.h — the behavioural check behind
// network_deny (cordon/windows/network_check.h): a connect from inside the
// run's AppContainer to a loopback listener the launcher opens.
#pragma once

#include "windows/launcher/win32.h"

#include <string>

#include "cordon/windows/network_check.h"

namespace cordon::windows::launcher {

// Opens a TCP listener on 127.0.0.1 (an ephemeral port), starts
// the system directory's curl.exe (GetSystemDirectoryW) -q --noproxy 127.0.0.1
// --connect-timeout 5 http://127.0.0.1:PORT/
// under `token` in the AppContainer `appcontainer_sid` with no capabilities
// (what the command gets), without inherited handles and in a Job Object
// that kills it on close, waits at most 15 s, and reports the probe's exit
// status and whether a connection reached the listener. Never fails: a step
// that fails is an observation with ran = false and the step in `reason`
// (network_deny_after_probe() then claims nothing).
connect_probe_observation probe_appcontainer_connect(HANDLE token, PSID appcontainer_sid);

}  // namespace cordon::windows::launcher
