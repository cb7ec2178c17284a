/*
 * password: bcrypt ($2b$) through libxcrypt, and the rule a new password
 * meets (NIST SP 800-63B 5.1.1.2: at least 8 characters, at least 64
 * accepted, no composition rules). Hashing at cost 10 takes tens of
 * milliseconds of CPU, so the apps run these through app_offload().
 * Thread-safe (reentrant crypt_rn with per-call state).
 *
 * bcrypt reads only the first 72 bytes: a longer password (64 characters of
 * a non-Latin script are up to 256 bytes) is hashed as the hex of its
 * SHA-256, so every byte of it counts and none is silently cut.
 */
#ifndef SUTLAB_PASSWORD_H
#define SUTLAB_PASSWORD_H

#include <stddef.h>

#define PASSWORD_HASH_MAX 128
#define PASSWORD_MIN_CHARS 8    /* NIST SP 800-63B: at least 8 characters */
#define PASSWORD_MAX_BYTES 256  /* 64 characters of any script (4 bytes each in UTF-8) */

/* The characters (UTF-8 code points) of a valid UTF-8 string of len bytes. */
size_t password_characters(const char *password, size_t len);

/* Hashes with a fresh random salt. Returns 0, or -1 on failure. */
int password_hash(const char *password, int cost, char out[PASSWORD_HASH_MAX]);

/* 1 if password matches hash (compared in constant time), else 0. */
int password_verify(const char *password, const char *hash);

#endif
