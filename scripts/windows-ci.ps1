# scripts/windows-ci.ps1 — for a future Windows CI runner (not run on the
# Linux CI; docs/windows-backend.md, "A Windows runner"). It takes the
# binaries scripts/test-windows.sh built (build-windows/*.exe, copied to the
# runner) and proves on real Windows what wine cannot:
#   1. the wine suite again, now without skips: job memory and process
#      limits, privilege removal, AppContainer, DACL denial, reparse points,
#      share modes (every WindowsOnly.* test runs instead of skipping);
#   2. the restore-after-crash test: a run is killed while it holds a DACL
#      lease; the next start must restore every original descriptor;
#   3. the probes of what only a real AppContainer shows (issue 36, item 5):
#      a. a connect from the child to loopback and to a LAN address fails,
#         and the report says network_deny was checked by the launcher's own
#         probe (cordon/windows/network_check.h) before the command ran;
#      b. a tree granted to ALL APPLICATION PACKAGES stays denied when the
#         policy lists it denied;
#      c. a protected path is readable but not writable;
#      d. a file the child creates carries no AppContainer ACE after the run;
#      e. two concurrent runs on one workspace leave every DACL as before
#         (the machine-wide lease lock, src/windows/launcher/machine_lock.h);
#      f. cordon.exe gate run on a windows gate passes and its report says
#         "completed", with its policy file named relative to the manifest
#         and by an absolute Windows path (C:\...\probe.json);
#      g. protect_vcs_metadata: a write to a repository's .git\config (and
#         into .git\hooks) from the child fails, a write to the workspace
#         works, and the metadata's DACLs are as before after the run.
# Exit status 0 only when all pass. Run from an ordinary (non-elevated)
# user: an elevated one would hide a missing privilege removal.
param(
  [string]$Bin = "build-windows",
  [string]$Results = "windows-results"
)
$ErrorActionPreference = "Stop"
New-Item -ItemType Directory -Force -Path $Results | Out-Null
$failed = $false

# 1. The suite, every case, GoogleTest JSON for the CI's summary.
& "$Bin\cordon_wine_tests.exe" --gtest_brief=1 "--gtest_output=json:$Results\cordon_windows_tests.json"
if ($LASTEXITCODE -ne 0) { $failed = $true }
$report = Get-Content "$Results\cordon_windows_tests.json" | ConvertFrom-Json
foreach ($suite in $report.testsuites) {
  foreach ($case in $suite.testsuite) {
    if ($case.result -eq "SKIPPED") {
      Write-Host "skipped on Windows (must not be): $($suite.name).$($case.name)"
      $failed = $true
    }
  }
}

# 2. Restore after a crash. The policy grants a writable directory and denies
#    a subdirectory; the run sleeps, and is killed while the lease is held.
$root = Join-Path $env:TEMP "cordon-crash-$PID"
$leases = Join-Path $root "leases"
$work = Join-Path $root "work"
New-Item -ItemType Directory -Force -Path $leases, "$work\secret" | Out-Null
$before = @{ work = (Get-Acl $work).Sddl; secret = (Get-Acl "$work\secret").Sddl }
$policy = @{
  schema_version = 1; name = "crash-test"; isolation = "os_sandbox"
  filesystem = @{ read = "restricted"; include_platform_defaults = $true
                  readable = @(); writable = @("{workspace}"); protected_read_only = @(); denied = @("{workspace}/secret") }
  network = @{ mode = "denied"; allow_local_binding = $false; rules = @(); default_action = "deny" }
  environment = @{ inherit = "none"; allow = @(); set = @{ SystemRoot = $env:SystemRoot } }
  process = @{ tree_cleanup = $true }
  enforcement = @{ filesystem_read = "unverified"; filesystem_write = "unverified"; filesystem_deny = "unverified"
                   network_deny = "unverified"; environment = "unverified"; process_tree_cleanup = "unverified"
                   privilege = "unverified"; descriptor_hygiene = "unverified"; terminal = "unverified" }
}
$policyFile = Join-Path $root "policy.json"
$policy | ConvertTo-Json -Depth 5 | Set-Content -Encoding utf8 $policyFile
Copy-Item "$Bin\cordon_wine_child.exe" $work
$run = Start-Process -PassThru -NoNewWindow "$Bin\cordon.exe" -ArgumentList @(
  "run", "--policy", $policyFile, "--workspace", $work, "--lease-dir", $leases, "--", "$work\cordon_wine_child.exe", "sleep", "60000")
Start-Sleep -Seconds 5
$during = (Get-Acl "$work\secret").Sddl
if ($during -eq $before.secret) { Write-Host "the lease did not change the denied directory"; $failed = $true }
if (-not (Get-ChildItem $leases -Filter "lease-*.json")) { Write-Host "no lease record while the run holds a lease"; $failed = $true }
Stop-Process -Id $run.Id -Force   # the crash: no cleanup runs
Start-Sleep -Seconds 2
& "$Bin\cordon.exe" recover --lease-dir $leases
if ($LASTEXITCODE -ne 0) { $failed = $true }
$after = @{ work = (Get-Acl $work).Sddl; secret = (Get-Acl "$work\secret").Sddl }
foreach ($k in $before.Keys) {
  if ($before[$k] -ne $after[$k]) { Write-Host "not restored: $k`n  before $($before[$k])`n  after  $($after[$k])"; $failed = $true }
}
if (Get-ChildItem $leases -Filter "lease-*.json") { Write-Host "the lease record was not removed"; $failed = $true }
Remove-Item -Recurse -Force $root

# 3. The AppContainer probes. Each runs the child (tests/windows/wine/child.cpp)
#    under a policy with the workspace writable, network denied.
$root = Join-Path $env:TEMP "cordon-probes-$PID"
$work = Join-Path $root "work"
New-Item -ItemType Directory -Force -Path $work, "$work\aap", "$work\prot" | Out-Null
Set-Content -Path "$work\aap\file.txt" -Value "granted to every package"
Set-Content -Path "$work\prot\file.txt" -Value "protected"
Copy-Item "$Bin\cordon_wine_child.exe" $work
$probe = $policy.Clone()
$probe.name = "probe"
$probe.filesystem = @{ read = "restricted"; include_platform_defaults = $true; readable = @()
                       writable = @("{workspace}"); protected_read_only = @("{workspace}/prot"); denied = @("{workspace}/aap") }
$probeFile = Join-Path $root "probe.json"
$probe | ConvertTo-Json -Depth 5 | Set-Content -Encoding utf8 $probeFile
function Invoke-Probe([string[]]$ChildArgs) {
  $ErrorActionPreference = "Continue"  # cordon's stderr is output to judge, not an error to stop at
  $out = & "$Bin\cordon.exe" run --policy $probeFile --workspace $work -- "$work\cordon_wine_child.exe" @ChildArgs 2>&1
  return ($out | Out-String)
}
function Test-Probe([string]$Name, [bool]$Ok, [string]$Detail) {
  if ($Ok) { Write-Host "probe ok: $Name" } else { Write-Host "probe FAILED: $Name`n$Detail"; $script:failed = $true }
}

# 3a. Network: loopback and the first LAN address, each with a listener.
$lan = (Get-NetIPAddress -AddressFamily IPv4 | Where-Object { $_.IPAddress -notlike "127.*" -and $_.IPAddress -notlike "169.254.*" } |
        Select-Object -First 1).IPAddress
foreach ($ip in @("127.0.0.1", $lan)) {
  if (-not $ip) { Test-Probe "connect: a LAN address exists" $false "no non-loopback IPv4 address"; continue }
  $listener = [System.Net.Sockets.TcpListener]::new([System.Net.IPAddress]::Parse($ip), 0)
  $listener.Start()
  $port = $listener.LocalEndpoint.Port
  $out = Invoke-Probe @("connect", $ip, "$port")
  Test-Probe "connect to $ip fails" ($out -match "connect failed" -and -not $listener.Pending()) $out
  $listener.Stop()
}

# The launcher's own check: network_deny stays as planned only after a
# connect from the AppContainer failed, and the report says so.
$netReport = Join-Path $root "network-report.json"
$ErrorActionPreference = "Continue"
& "$Bin\cordon.exe" run --policy $probeFile --workspace $work --report $netReport -- "$work\cordon_wine_child.exe" argv net 2>&1 | Out-Null
$ErrorActionPreference = "Stop"
$deny = (Get-Content $netReport -ErrorAction SilentlyContinue | ConvertFrom-Json).controls.network_deny
Test-Probe "the report's network_deny was checked by a connect from the AppContainer" `
  (($deny.level -eq "unverified") -and ($deny.detail -match "checked before the run: a connect from the AppContainer to 127\.0\.0\.1:\d+ failed")) `
  ($deny | ConvertTo-Json)

# 3b. A tree ALL APPLICATION PACKAGES may read stays denied when listed denied.
& icacls "$work\aap" /grant "*S-1-15-2-1:(OI)(CI)RX" | Out-Null
$out = Invoke-Probe @("read", "$work\aap\file.txt")
Test-Probe "denied tree granted to ALL APPLICATION PACKAGES stays denied" ($out -match "read failed 5") $out

# 3c. Protected: readable, not writable.
$out = Invoke-Probe @("read", "$work\prot\file.txt")
Test-Probe "protected path is readable" ($out -match "read ok") $out
$out = Invoke-Probe @("write", "$work\prot\new.txt")
Test-Probe "protected path is not writable" (($out -match "write failed 5") -and -not (Test-Path "$work\prot\new.txt")) $out

# 3d. What the child created carries no ACE for its AppContainer SID
#     (S-1-15-2- with more than one sub-authority; the package groups are
#     S-1-15-2-1 and S-1-15-2-2).
$out = Invoke-Probe @("write", "$work\created.txt")
$sddl = (Get-Acl "$work\created.txt").Sddl
Test-Probe "a created file has no AppContainer ACE after the run" ($sddl -notmatch "S-1-15-2-\d+-\d+") "$out`n$sddl"

# 3e. Two concurrent runs on one workspace leave the DACLs as before.
$paths = @($work, "$work\aap", "$work\prot")
$beforeAcl = @{}; foreach ($p in $paths) { $beforeAcl[$p] = (Get-Acl $p).Sddl }
$runs = 1..2 | ForEach-Object {
  Start-Process -PassThru -NoNewWindow "$Bin\cordon.exe" -ArgumentList @(
    "run", "--policy", $probeFile, "--workspace", $work, "--", "$work\cordon_wine_child.exe", "sleep", "3000")
}
$runs | Wait-Process
$same = $true
foreach ($p in $paths) {
  if ((Get-Acl $p).Sddl -ne $beforeAcl[$p]) { $same = $false; Write-Host "changed: $p`n  before $($beforeAcl[$p])`n  after  $((Get-Acl $p).Sddl)" }
}
Test-Probe "two concurrent runs leave every DACL as before" $same ""

# 3g. protect_vcs_metadata (src/windows/vcs_protection.h): the repository the
#     gatherer finds in the workspace has its metadata protected for the run.
New-Item -ItemType Directory -Force -Path "$work\repo\.git\hooks" | Out-Null
Set-Content -Path "$work\repo\.git\config" -Value "[core]"
$vcs = $probe.Clone()
$vcs.name = "probe-vcs"
$vcs.filesystem = @{ read = "restricted"; include_platform_defaults = $true; readable = @()
                     writable = @("{workspace}"); protected_read_only = @(); denied = @(); protect_vcs_metadata = $true }
$vcsFile = Join-Path $root "probe-vcs.json"
$vcs | ConvertTo-Json -Depth 5 | Set-Content -Encoding utf8 $vcsFile
$vcsBefore = @{ config = (Get-Acl "$work\repo\.git\config").Sddl; hooks = (Get-Acl "$work\repo\.git\hooks").Sddl }
function Invoke-VcsProbe([string[]]$ChildArgs) {
  $ErrorActionPreference = "Continue"
  $out = & "$Bin\cordon.exe" run --policy $vcsFile --workspace $work -- "$work\cordon_wine_child.exe" @ChildArgs 2>&1
  return ($out | Out-String)
}
$out = Invoke-VcsProbe @("write", "$work\repo\.git\config")
Test-Probe "protect_vcs_metadata: .git\config is not writable" `
  (($out -match "write failed 5") -and ((Get-Content "$work\repo\.git\config" | Out-String) -match "\[core\]")) $out
$out = Invoke-VcsProbe @("write", "$work\repo\.git\hooks\pre-commit")
Test-Probe "protect_vcs_metadata: nothing is created in .git\hooks" `
  (($out -match "write failed 5") -and -not (Test-Path "$work\repo\.git\hooks\pre-commit")) $out
$out = Invoke-VcsProbe @("write", "$work\repo\file.txt")
Test-Probe "protect_vcs_metadata: the workspace stays writable" (Test-Path "$work\repo\file.txt") $out
Test-Probe "protect_vcs_metadata: the metadata's DACLs are restored" `
  (((Get-Acl "$work\repo\.git\config").Sddl -eq $vcsBefore.config) -and ((Get-Acl "$work\repo\.git\hooks").Sddl -eq $vcsBefore.hooks)) ""

# 3f. A windows gate through cordon.exe gate run, its manifest in DIR (a gate
#     starts in the manifest's directory), its policy file named by REF:
#     relative to the manifest, then by an absolute Windows path outside the
#     manifest's directory (src/manifest/manifest_text.h, classify_path).
Copy-Item $probeFile "$work\probe.json"
New-Item -ItemType Directory -Force -Path "$work\gates" | Out-Null
function Test-GateProbe([string]$Name, [string]$Dir, [string]$Ref, [string]$Out) {
  Set-Content -Encoding utf8 -Path "$Dir\gates.toml" -Value @"
[[gate]]
name = "probe"
cmd = ['$work\cordon_wine_child.exe', 'argv', 'gate-ok']
env = "windows"
sandbox_policy = '$Ref'
"@
  & "$Bin\cordon.exe" gate run "$Dir\gates.toml" --workspace $work --out $Out
  $gateReport = Get-Content "$Out\gate\probe.sandbox.json" -ErrorAction SilentlyContinue | ConvertFrom-Json
  Test-Probe $Name (($LASTEXITCODE -eq 0) -and ($gateReport.outcome -eq "completed")) ""
}
Test-GateProbe "cordon.exe gate run passes a windows gate" $work "probe.json" "$root\gate-run"
Copy-Item "$root\gate-run" "$Results\gate-run" -Recurse -ErrorAction SilentlyContinue
Test-GateProbe "a windows gate's policy file named by an absolute path" "$work\gates" "$work\probe.json" "$root\gate-run-abs"
Remove-Item -Recurse -Force $root

if ($failed) { exit 1 }
Write-Host "windows-ci: all checks passed"
