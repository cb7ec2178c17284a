#include "apps/common/password.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BCRYPT_MAX_BYTES 72

size_t password_characters(const char *password, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)password[i] & 0xC0) != 0x80; /* every byte but a continuation starts one */
    return n;
}

/* What bcrypt is given: the password itself when bcrypt reads all of it,
 * else the hex of its SHA-256 (64 bytes). */
static const char *bcrypt_input(const char *password, char hex[2 * SHA256_DIGEST_LENGTH + 1])
{
    unsigned char digest[SHA256_DIGEST_LENGTH];
    size_t len = strlen(password);
    if (len <= BCRYPT_MAX_BYTES)
        return password;
    SHA256((const unsigned char *)password, len, digest);
    for (size_t i = 0; i < sizeof(digest); i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return hex;
}

int password_hash(const char *password, int cost, char out[PASSWORD_HASH_MAX])
{
    char hex[2 * SHA256_DIGEST_LENGTH + 1];
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    struct crypt_data *data;
    const char *h;
    int rc = -1;

    /* NULL entropy: libxcrypt reads the salt from the OS's CSPRNG */
    if (crypt_gensalt_rn("$2b$", (unsigned long)cost, NULL, 0, salt, sizeof(salt)) == NULL)
        return -1;
    if ((data = calloc(1, sizeof(*data))) == NULL) /* ~32 KiB: not on a small thread stack */
        return -1;
    h = crypt_rn(bcrypt_input(password, hex), salt, data, sizeof(*data));
    OPENSSL_cleanse(hex, sizeof(hex));
    if (h != NULL && h[0] == '$' && strlen(h) < PASSWORD_HASH_MAX) {
        strcpy(out, h);
        rc = 0;
    }
    free(data);
    return rc;
}

int password_verify(const char *password, const char *hash)
{
    char hex[2 * SHA256_DIGEST_LENGTH + 1];
    struct crypt_data *data = calloc(1, sizeof(*data));
    const char *h;
    int ok = 0;

    if (data == NULL)
        return 0;
    h = crypt_rn(bcrypt_input(password, hex), hash, data, sizeof(*data));
    OPENSSL_cleanse(hex, sizeof(hex));
    if (h != NULL && h[0] == '$' && strlen(h) == strlen(hash))
        ok = CRYPTO_memcmp(h, hash, strlen(hash)) == 0;
    free(data);
    return ok;
}
