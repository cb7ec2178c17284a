/*
 * Fixtures of the delivery app (make-delivery): store categories, stores with
 * fixture owners, menus. Names are plain ASCII so that every client and log
 * shows them as they are.
 */
#include <stdio.h>

#include "tools/seed_gen.h"

#define NDISHES 6

typedef struct category {
    const char *name;
    const char *dishes[NDISHES];
} category_t;

static const category_t categories[SEED_MAX_STORE_CATEGORIES] = {
    {"Korean", {"Bibimbap", "Bulgogi", "Kimchi Jjigae", "Japchae", "Galbi", "Sundubu Jjigae"}},
    {"Chinese", {"Jajangmyeon", "Jjamppong", "Sweet and Sour Pork", "Fried Rice", "Mapo Tofu", "Dumplings"}},
    {"Japanese", {"Sushi Set", "Ramen", "Tonkatsu", "Udon", "Donburi", "Sashimi"}},
    {"Pizza", {"Margherita", "Pepperoni Pizza", "Bulgogi Pizza", "Potato Pizza", "Hawaiian Pizza", "Four Cheese Pizza"}},
    {"Chicken", {"Fried Chicken", "Yangnyeom Chicken", "Soy Garlic Chicken", "Boneless Chicken", "Chicken Wings",
                 "Roast Chicken"}},
    {"Burger", {"Cheeseburger", "Bacon Burger", "Chicken Burger", "Shrimp Burger", "Double Patty Burger",
                "Veggie Burger"}},
    {"Bunsik", {"Tteokbokki", "Gimbap", "Sundae", "Twigim", "Ramyeon", "Eomuk"}},
    {"Cafe and Dessert", {"Americano", "Cafe Latte", "Cheesecake", "Bingsu", "Waffle", "Macaron Set"}},
    {"Western", {"Pasta Carbonara", "Sirloin Steak", "Mushroom Risotto", "Caesar Salad", "Lasagna", "Fish and Chips"}},
    {"Jokbal and Bossam", {"Jokbal", "Bossam", "Spicy Jokbal", "Makguksu", "Bossam Set", "Jokbal Set"}},
    {"Stew and Soup", {"Gamjatang", "Seolleongtang", "Budae Jjigae", "Doenjang Jjigae", "Galbitang", "Haejangguk"}},
    {"Seafood", {"Grilled Mackerel", "Spicy Squid", "Seafood Pancake", "Raw Fish Platter", "Steamed Mussels",
                 "Spicy Fish Stew"}},
    {"Salad", {"Cobb Salad", "Chicken Salad", "Greek Salad", "Poke Bowl", "Quinoa Bowl", "Salmon Salad"}},
    {"Mexican", {"Tacos", "Burrito", "Quesadilla", "Nachos", "Enchiladas", "Fajitas"}},
    {"Indian", {"Butter Chicken", "Chicken Tikka Masala", "Palak Paneer", "Biryani", "Garlic Naan", "Samosa"}},
    {"Vietnamese", {"Pho", "Banh Mi", "Bun Cha", "Spring Rolls", "Com Tam", "Bun Bo Hue"}},
    {"Thai", {"Pad Thai", "Green Curry", "Tom Yum Goong", "Massaman Curry", "Som Tam", "Khao Pad"}},
    {"Lunch Box", {"Bulgogi Dosirak", "Chicken Mayo Dosirak", "Pork Cutlet Dosirak", "Kimchi Dosirak",
                   "Fish Dosirak", "Veggie Dosirak"}},
    {"Bakery", {"Croissant", "Baguette Sandwich", "Cinnamon Roll", "Bagel", "Pain au Chocolat", "Scone"}},
    {"Late Night", {"Dakbal", "Gopchang", "Makchang", "Spicy Rice Cakes", "Ramyeon Set", "Grilled Intestines"}},
};

/* Addresses are whole districts, so that the listing's address filter
 * (GET /stores?categoryId=N&address=...) matches a useful share of stores. */
static const char *const districts[] = {
    "Seoul Gangnam-gu", "Seoul Seocho-gu", "Seoul Songpa-gu",  "Seoul Mapo-gu",       "Seoul Yongsan-gu",
    "Seoul Jongno-gu",  "Seoul Gwanak-gu", "Seoul Seongdong-gu", "Seoul Yeongdeungpo-gu", "Seoul Nowon-gu",
};

static const char *const adjectives[] = {
    "Golden", "Happy", "Grandma's", "Royal", "Fresh", "Little", "Old Town", "Lucky", "Sunny", "Midnight", "Green", "Hanok",
};

static const char *const nouns[] = {
    "Kitchen", "House", "Table", "Express", "Corner", "Garden", "Bistro", "Place", "Story", "Station",
};

static const char *const styles[] = {
    "Homemade", "Spicy", "Classic", "Signature", "Crispy", "Hearty", "Light", "Generous",
};

static const char *const sides[] = {
    "rice", "kimchi", "pickled radish", "a soft drink", "salad", "soup", "fries", "extra sauce",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define PICK(ctx, a) ((a)[prng_below(&(ctx)->rng, COUNT(a))])

/* Percent of fixture stores that are open: most, as on a real evening. */
#define OPEN_PERCENT 85

int seed_gen_store_categories(seed_ctx_t *ctx, pgcopy_t *out)
{
    for (uint32_t id = 1; id <= ctx->size->store_categories; id++) {
        pgcopy_int(out, id);
        pgcopy_text(out, categories[id - 1].name);
        if (pgcopy_end_row(out) != 0)
            return -1;
    }
    return 0;
}

/* Stores are numbered category by category: category c holds the ids
 * (c-1)*stores_per_category+1 .. c*stores_per_category. */
int seed_gen_stores(seed_ctx_t *ctx, pgcopy_t *out)
{
    const seed_size_t *sz = ctx->size;
    char name[128], phone[32], intro[256], ts[SEED_TIME_LEN];
    uint64_t id = 1, nstores = (uint64_t)sz->store_categories * sz->stores_per_category;
    size_t len;

    for (uint32_t cat = 1; cat <= sz->store_categories; cat++) {
        const category_t *c = &categories[cat - 1];
        for (uint32_t j = 0; j < sz->stores_per_category; j++, id++) {
            /* One draw per statement: the order in which C evaluates function
             * arguments is unspecified, and the order of draws is the data. */
            const char *district = PICK(ctx, districts);
            const char *adjective = PICK(ctx, adjectives);
            const char *noun = PICK(ctx, nouns);
            int phone_mid = (int)prng_below(&ctx->rng, 10000);
            int phone_end = (int)prng_below(&ctx->rng, 10000);
            snprintf(name, sizeof(name), "%s %s %s", adjective, c->name, noun);
            snprintf(phone, sizeof(phone), "010-%04d-%04d", phone_mid, phone_end);
            /* Owners spread uniformly over all fixture users. */
            int64_t owner = prng_range(&ctx->rng, 1, sz->users);
            int opened = prng_chance(&ctx->rng, OPEN_PERCENT, 100);
            const char *dish = c->dishes[prng_below(&ctx->rng, NDISHES)];
            switch (prng_below(&ctx->rng, 4)) {
            case 0:
                snprintf(intro, sizeof(intro), "Serving %s food in %s since %d.", c->name, district,
                         (int)prng_range(&ctx->rng, 1985, 2023));
                break;
            case 1:
                snprintf(intro, sizeof(intro), "Try our signature %s! Fast delivery across %s.", dish, district);
                break;
            case 2:
                snprintf(intro, sizeof(intro), "Family-run %s place. Fresh ingredients every morning.", c->name);
                break;
            default:
                snprintf(intro, sizeof(intro), "Famous for %s. Open late, delivered hot.", dish);
                break;
            }
            pgcopy_int(out, (int64_t)id);
            pgcopy_text(out, name);
            pgcopy_text(out, phone);
            pgcopy_text(out, district);
            pgcopy_int(out, owner);
            pgcopy_text(out, opened ? "OPENED" : "CLOSED");
            pgcopy_text(out, intro);
            pgcopy_int(out, cat);
            len = seed_format_time(ts, seed_spread_ms(SEED_STORES_START_MS, id, nstores));
            pgcopy_textn(out, ts, len); /* created_at */
            pgcopy_textn(out, ts, len); /* updated_at */
            if (pgcopy_end_row(out) != 0)
                return -1;
        }
    }
    return 0;
}

int seed_gen_menus(seed_ctx_t *ctx, pgcopy_t *out)
{
    const seed_size_t *sz = ctx->size;
    uint64_t store = 1, id = 1;
    char name[128], desc[256];
    uint32_t order[NDISHES];

    for (uint32_t cat = 1; cat <= sz->store_categories; cat++) {
        const category_t *c = &categories[cat - 1];
        for (uint32_t j = 0; j < sz->stores_per_category; j++, store++) {
            /* Each store sells its category's dishes in its own order; with
             * more menus than dishes, the extra ones are larger sets. */
            prng_permutation(&ctx->rng, order, NDISHES);
            for (uint32_t k = 0; k < sz->menus_per_store; k++, id++) {
                const char *dish = c->dishes[order[k % NDISHES]];
                if (k < NDISHES)
                    snprintf(name, sizeof(name), "%s", dish);
                else
                    snprintf(name, sizeof(name), "%s Set %u", dish, k / NDISHES + 1);
                const char *style = PICK(ctx, styles);
                const char *side = PICK(ctx, sides);
                int64_t price = 1000 + 500 * prng_range(&ctx->rng, 0, 58); /* 1,000..30,000 step 500 */
                snprintf(desc, sizeof(desc), "%s %s, served with %s.", style, dish, side);
                pgcopy_int(out, (int64_t)id);
                pgcopy_int(out, (int64_t)store);
                pgcopy_text(out, name);
                pgcopy_int(out, price);
                pgcopy_text(out, desc);
                if (pgcopy_end_row(out) != 0)
                    return -1;
            }
        }
    }
    return 0;
}
