/* The plugin ABI as a C11 compiler sees it: every declaration, and a failure rule's
 * older field names as the same storage as their new ones. */
#include <confine/sdk/abi.h>

#include <stddef.h>

_Static_assert(offsetof(confine_failure_rule, evidence_exit_codes) == offsetof(confine_failure_rule, allowed_exit_codes),
               "allowed_exit_codes is evidence_exit_codes");
_Static_assert(offsetof(confine_failure_rule, evidence_exit_codes_count) == offsetof(confine_failure_rule, allowed_exit_codes_count),
               "allowed_exit_codes_count is evidence_exit_codes_count");

int main(void) {
    static const int32_t codes[] = {125};
    confine_failure_rule rule = {0};
    rule.struct_size = sizeof rule;
    rule.evidence_exit_codes = codes;
    rule.evidence_exit_codes_count = 1;
    return rule.evidence_exit_codes_count == 1 && rule.evidence_exit_codes[0] == 125 ? 0 : 1;
}
