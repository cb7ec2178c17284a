/*
 * fuzz_fault_rule: the admin listener's fault rule parser (fault_parse_rule in
 * servers/core/fault.c), fed any body. Whatever it accepts must hold the rule's invariants, which
 * are checked here independently: a match starting with '/' and NUL-terminated within its
 * buffer, latency and jitter within 0..60000 ms, a status of 400..599, rates within 0..1 that
 * add up to at most 1, and at least one effect. A refusal must leave a one-line reason.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fault.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fault_rule_t r;
    char err[200];

    memset(err, 0x7f, sizeof(err));
    if (fault_parse_rule((const char *)data, size, &r, err, sizeof(err)) != 0) {
        if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0' || strchr(err, '\n') != NULL) {
            fprintf(stderr, "fault_parse_rule: a refusal without a one-line reason\n");
            abort();
        }
        return 0;
    }
    if (memchr(r.match, '\0', sizeof(r.match)) == NULL || r.match[0] != '/' || r.latency_ms < 0 ||
        r.latency_ms > 60000 || r.jitter_ms < 0 || r.jitter_ms > 60000 || r.status < 400 || r.status > 599 ||
        !(r.error_rate >= 0 && r.error_rate <= 1) || !(r.reset_rate >= 0 && r.reset_rate <= 1) ||
        r.error_rate + r.reset_rate > 1 ||
        (r.latency_ms == 0 && r.jitter_ms == 0 && r.error_rate == 0 && r.reset_rate == 0)) {
        fprintf(stderr, "fault_parse_rule accepted a rule that breaks its contract: %s\n", r.match);
        abort();
    }
    return 0;
}
