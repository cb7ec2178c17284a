-- Users and sessions are shared by every app: the board app (RealWorld) adds
-- register/login on top; the delivery app uses them for store owners.
CREATE TABLE users (
    id            bigserial PRIMARY KEY,
    username      text NOT NULL,
    email         text NOT NULL,
    password_hash text NOT NULL,              -- bcrypt ($2b$), never plain text
    bio           text NOT NULL DEFAULT '',
    image         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
-- Uniqueness is a constraint, not a secondary index: `sutlab db indexes off`
-- leaves it alone, so duplicates stay impossible in every lab configuration.
ALTER TABLE users ADD CONSTRAINT users_username_key UNIQUE (username);
ALTER TABLE users ADD CONSTRAINT users_email_key UNIQUE (email);

-- Opaque bearer tokens: the client holds 32 random bytes (hex), the table
-- holds only their SHA-256, so a leaked table does not leak sessions.
CREATE TABLE sessions (
    token_hash  bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    user_id     bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);

-- make-delivery: store categories, stores, menus (column names follow its
-- MyBatis mapping; JSON field names are camelCase in the API).
CREATE TABLE store_categories (
    id    bigserial PRIMARY KEY,
    name  text NOT NULL
);

CREATE TABLE stores (
    id            bigserial PRIMARY KEY,
    name          text NOT NULL,
    phone         text NOT NULL,
    address       text NOT NULL,
    owner_id      bigint NOT NULL REFERENCES users(id),
    open_status   text NOT NULL DEFAULT 'CLOSED' CHECK (open_status IN ('OPENED', 'CLOSED')),
    introduction  text NOT NULL DEFAULT '',
    category_id   bigint NOT NULL REFERENCES store_categories(id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE menus (
    id           bigserial PRIMARY KEY,
    store_id     bigint NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
    name         text NOT NULL,
    price        integer NOT NULL CHECK (price >= 0),
    description  text NOT NULL DEFAULT ''
);

-- Secondary indexes (dropped and recreated by `sutlab db indexes off|on`;
-- every one of them is named here with the prefix idx_).
CREATE INDEX idx_sessions_user_id ON sessions (user_id);
CREATE INDEX idx_stores_category_id ON stores (category_id, id);
CREATE INDEX idx_stores_owner_id ON stores (owner_id);
CREATE INDEX idx_menus_store_id ON menus (store_id, id);
