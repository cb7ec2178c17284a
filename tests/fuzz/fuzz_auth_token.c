/*
 * fuzz_auth_token: the Authorization header parser (auth_token_hash in
 * servers/apps/common/auth.c), which every authenticated request runs on client bytes before
 * the session look-up. Checked against a reference written from the header's contract:
 * "Token <64 hex>" or "Bearer <64 hex>" (scheme case-insensitive, one space, nothing else)
 * is accepted, and the output is "\x" + the lower-case hex SHA-256 of the 32 decoded bytes
 * (what the sessions table stores); anything else is refused without touching the output.
 * Also checks once that auth_new_token's tokens are 64 lower-case hex digits whose hash is
 * the one auth_token_hash computes for them.
 *
 * Input: the header value.
 */
#include <openssl/sha.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "apps/common/auth.h"
#include "fuzz_check.h"

static int hex(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reference: the 32 raw bytes of a well-formed header, or -1. */
static int ref_parse(const uint8_t *h, size_t len, unsigned char raw[32])
{
    size_t skip;
    if (len == 6 + 64 && strncasecmp((const char *)h, "Token ", 6) == 0)
        skip = 6;
    else if (len == 7 + 64 && strncasecmp((const char *)h, "Bearer ", 7) == 0)
        skip = 7;
    else
        return -1;
    for (size_t i = 0; i < 32; i++) {
        int hi = hex(h[skip + 2 * i]), lo = hex(h[skip + 2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        raw[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

static void expected_hash(const unsigned char raw[32], char out[67])
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256(raw, 32, d);
    out[0] = '\\';
    out[1] = 'x';
    for (size_t i = 0; i < 32; i++)
        snprintf(out + 2 + 2 * i, 3, "%02x", d[i]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int k = 0; k < 4; k++) {
        char token[AUTH_TOKEN_HEX + 1], hash[67], again[67], header[7 + AUTH_TOKEN_HEX + 1];
        CHECK(auth_new_token(token, hash) == 0);
        CHECK(strlen(token) == 64 && strspn(token, "0123456789abcdef") == 64);
        snprintf(header, sizeof(header), "Bearer %s", token);
        CHECK(auth_token_hash(header, strlen(header), again) == 0 && strcmp(hash, again) == 0);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy, so ASan sees any read past the header */
    char *h = malloc(size ? size : 1);
    memcpy(h, data, size);
    char out[67], want[67];
    unsigned char raw[32];
    memset(out, 0x5a, sizeof(out));

    int rc = auth_token_hash(h, size, out);
    if (ref_parse(data, size, raw) == 0) {
        CHECK(rc == 0);
        expected_hash(raw, want);
        CHECK(memcmp(out, want, 66) == 0 && out[66] == '\0');
    } else {
        CHECK(rc == -1);
        for (size_t i = 0; i < sizeof(out); i++)
            CHECK(out[i] == 0x5a);
    }
    free(h);
    return 0;
}
