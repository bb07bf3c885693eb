// src/core/idna.h — internationalized host names (IDNA) for network rules and
// destinations: a name with non-ASCII characters is converted to its ASCII
// form (A-labels, "xn--...") before it is validated or matched, so a rule
// written "bücher.example" and a destination sent as "xn--bcher-kva.example"
// are the same name (docs/network.md, "Internationalized names").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cordon::detail {

struct idna_result {
  std::string ascii;   // the name in ASCII (lower case); empty when `problem` is set
  std::string problem; // why the name is not a valid internationalized name
};

// Does `name` contain a byte outside ASCII (and so need idna_to_ascii)?
bool has_non_ascii(std::string_view name);

// Converts a UTF-8 host name to its ASCII form with libidn2: IDNA2008
// (RFC 5891) lookup with the UTS #46 mapping, non-transitional (so "ß" stays
// "ß" and becomes "xn--...", as browsers do), NFC applied first. Invalid
// UTF-8, disallowed code points and labels that are too long are refused.
idna_result idna_to_ascii(std::string_view name);

}  // namespace cordon::detail
