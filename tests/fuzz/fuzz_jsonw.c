/*
 * fuzz_jsonw: the hand-written JSON writer of the hot responses (servers/core/jsonw.c), which
 * escapes text that came from clients (store names, addresses, titles, bodies, tags) into the
 * listings. Checked:
 *   - for valid UTF-8 input, jsonw_str's output is one JSON string that decodes back to exactly
 *     the input (NUL included, as \u0000);
 *   - for any input, the output is '"' + the input with '"', '\' and controls escaped + '"'
 *     and nothing else changed (bytes >= 0x20 other than '"' and '\' copied as they are);
 *   - several values written into one small buffer (growing it in the pool) make one valid
 *     array; jsonw_int_text copies a decimal integer as is and writes 0 for anything else.
 *
 * Input: pieces separated by 0xff bytes; the first piece also goes through jsonw_int_text.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "fuzz_check.h"

static int valid_utf8(const char *s, size_t len)
{
    /* jansson validates UTF-8 when it builds a string (NUL allowed with json_stringn) */
    json_t *t = json_stringn(s, len);
    if (t == NULL)
        return 0;
    json_decref(t);
    return 1;
}

/* The exact escaping: one string, nothing but '"', '\' and controls changed. */
static void check_escaping(const char *s, size_t len, const char *o, size_t olen)
{
    static const char hex[] = "0123456789abcdef";
    size_t j = 0;
    CHECK(olen >= 2 && o[j++] == '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        CHECK(j < olen);
        if (c >= 0x20 && c != '"' && c != '\\') {
            CHECK((unsigned char)o[j++] == c);
            continue;
        }
        CHECK(o[j++] == '\\');
        CHECK(j < olen);
        switch (c) {
        case '"':
        case '\\':
            CHECK((unsigned char)o[j++] == c);
            break;
        case '\n':
            CHECK(o[j++] == 'n');
            break;
        case '\r':
            CHECK(o[j++] == 'r');
            break;
        case '\t':
            CHECK(o[j++] == 't');
            break;
        default:
            CHECK(j + 5 <= olen && memcmp(o + j, "u00", 3) == 0 && o[j + 3] == hex[c >> 4] && o[j + 4] == hex[c & 15]);
            j += 5;
        }
    }
    CHECK(j + 1 == olen && o[j] == '"');
}

static void check_one(const char *s, size_t len)
{
    h2o_mem_pool_t pool;
    jsonw_t w;
    h2o_mem_init_pool(&pool);
    jsonw_init(&w, &pool, 0);
    jsonw_str(&w, s, len);
    h2o_iovec_t out = jsonw_result(&w);
    check_escaping(s, len, out.base, out.len);
    if (valid_utf8(s, len)) {
        json_error_t err;
        json_t *v = json_loadb(out.base, out.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        if (v == NULL) {
            fprintf(stderr, "jsonw_str output is not JSON: %s: %.*s\n", err.text, (int)out.len, out.base);
            abort();
        }
        CHECK(json_is_string(v) && json_string_length(v) == len && memcmp(json_string_value(v), s, len) == 0);
        json_decref(v);
    }
    h2o_mem_clear_pool(&pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    check_one(s, size);

    /* an array of the pieces (and integers) in one writer starting small */
    h2o_mem_pool_t pool;
    jsonw_t w;
    h2o_mem_init_pool(&pool);
    jsonw_init(&w, &pool, 1);
    jsonw_raw(&w, "[", 1);
    size_t start = 0, pieces = 0, all_valid = 1;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != 0xff)
            continue;
        if (pieces > 0)
            jsonw_raw(&w, ",", 1);
        if (pieces == 0) {
            /* jsonw_int_text: digits with an optional '-', at most 20 bytes, else 0 */
            size_t before = w.len;
            jsonw_int_text(&w, s + start, i - start);
            size_t k = (i - start > 0 && s[start] == '-') ? 1 : 0;
            int ok = i - start > k && i - start <= 20;
            for (size_t j = start + k; ok && j < i; j++)
                ok = s[j] >= '0' && s[j] <= '9';
            if (ok)
                CHECK(w.len - before == i - start && memcmp(w.buf + before, s + start, i - start) == 0);
            else
                CHECK(w.len - before == 1 && w.buf[before] == '0');
            jsonw_raw(&w, ",", 1);
            jsonw_int(&w, (long long)(i - start) * -7);
            jsonw_raw(&w, ",", 1);
        }
        jsonw_str(&w, s + start, i - start);
        all_valid &= (size_t)valid_utf8(s + start, i - start);
        pieces++;
        start = i + 1;
    }
    jsonw_raw(&w, "]", 1);
    if (all_valid) {
        json_error_t err;
        /* a leading integer of 20 digits may be out of jansson's range: read it as a real */
        json_t *v = json_loadb(w.buf, w.len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &err);
        if (v == NULL) {
            /* "-0001" style integers are not JSON numbers (leading zeros): jsonw_int_text's
             * contract is PostgreSQL's int output, which never has them; skip those */
            size_t k = size > 0 && s[0] == '-';
            int leading_zero = size > k + 1 && s[k] == '0' && s[k + 1] >= '0' && s[k + 1] <= '9';
            if (!leading_zero) {
                fprintf(stderr, "jsonw array is not JSON: %s: %.*s\n", err.text, (int)w.len, w.buf);
                abort();
            }
        } else {
            CHECK(json_is_array(v) && json_array_size(v) == pieces + 2);
            json_decref(v);
        }
    }
    h2o_mem_clear_pool(&pool);
    return 0;
}
