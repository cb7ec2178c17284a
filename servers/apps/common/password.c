#include "apps/common/password.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

int password_hash(const char *password, int cost, char out[PASSWORD_HASH_MAX])
{
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    struct crypt_data *data;
    const char *h;
    int rc = -1;

    /* NULL entropy: libxcrypt reads the salt from the OS's CSPRNG */
    if (crypt_gensalt_rn("$2b$", (unsigned long)cost, NULL, 0, salt, sizeof(salt)) == NULL)
        return -1;
    if ((data = calloc(1, sizeof(*data))) == NULL) /* ~32 KiB: not on a small thread stack */
        return -1;
    h = crypt_rn(password, salt, data, sizeof(*data));
    if (h != NULL && h[0] == '$' && strlen(h) < PASSWORD_HASH_MAX) {
        strcpy(out, h);
        rc = 0;
    }
    free(data);
    return rc;
}

int password_verify(const char *password, const char *hash)
{
    struct crypt_data *data = calloc(1, sizeof(*data));
    const char *h;
    int ok = 0;

    if (data == NULL)
        return 0;
    h = crypt_rn(password, hash, data, sizeof(*data));
    if (h != NULL && h[0] == '$' && strlen(h) == strlen(hash))
        ok = CRYPTO_memcmp(h, hash, strlen(hash)) == 0;
    free(data);
    return ok;
}
