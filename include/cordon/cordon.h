// cordon/cordon.h — the whole public API.
#pragma once

#include "cordon/backend.h"
#include "cordon/enforcement.h"
#include "cordon/host_facts.h"
#include "cordon/host_rules.h"
#include "cordon/launch.h"
#include "cordon/linux_backend.h"
#include "cordon/plan.h"
#include "cordon/policy.h"
#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "cordon/report.h"
#include "cordon/result.h"
#include "cordon/run.h"
#include "cordon/selection.h"
#include "cordon/validation.h"
#include "cordon/version.h"
