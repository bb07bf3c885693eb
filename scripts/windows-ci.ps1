# scripts/windows-ci.ps1 — for a future Windows CI runner (not run on the
# Linux CI; docs/windows-backend.md, "A Windows runner"). It takes the
# binaries scripts/test-windows.sh built (build-windows/*.exe, copied to the
# runner) and proves on real Windows what wine cannot:
#   1. the wine suite again, now without skips: job memory and process
#      limits, privilege removal, AppContainer, DACL denial, reparse points,
#      share modes (every WindowsOnly.* test runs instead of skipping);
#   2. the restore-after-crash test: a run is killed while it holds a DACL
#      lease; the next start must restore every original descriptor.
# Exit status 0 only when both pass. Run from an ordinary (non-elevated)
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

if ($failed) { exit 1 }
Write-Host "windows-ci: all checks passed"
