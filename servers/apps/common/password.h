/*
 * password: bcrypt ($2b$) through libxcrypt. Hashing at cost 10 takes tens
 * of milliseconds of CPU, so the apps run these through app_offload().
 * Thread-safe (reentrant crypt_rn with per-call state).
 */
#ifndef SUTLAB_PASSWORD_H
#define SUTLAB_PASSWORD_H

#include <stddef.h>

#define PASSWORD_HASH_MAX 128

/* Hashes with a fresh random salt. Returns 0, or -1 on failure. */
int password_hash(const char *password, int cost, char out[PASSWORD_HASH_MAX]);

/* 1 if password matches hash (compared in constant time), else 0. */
int password_verify(const char *password, const char *hash);

#endif
