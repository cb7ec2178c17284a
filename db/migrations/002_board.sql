-- The board app: the RealWorld ("Conduit") API, the Laravel blog of the
-- write-up (articles, likes = favorites, comments, users who follow users).

CREATE TABLE follows (
    follower_id  bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    followee_id  bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (follower_id, followee_id),
    CHECK (follower_id <> followee_id)
);

CREATE TABLE articles (
    id               bigserial PRIMARY KEY,
    slug             text NOT NULL,
    title            text NOT NULL,
    description      text NOT NULL,
    body             text NOT NULL,
    author_id        bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- kept exact by the same statement that adds or removes a favorite
    favorites_count  integer NOT NULL DEFAULT 0 CHECK (favorites_count >= 0),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE articles ADD CONSTRAINT articles_slug_key UNIQUE (slug);

CREATE TABLE tags (
    id    bigserial PRIMARY KEY,
    name  text NOT NULL
);
ALTER TABLE tags ADD CONSTRAINT tags_name_key UNIQUE (name);

CREATE TABLE article_tags (
    article_id  bigint NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    tag_id      bigint NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    position    smallint NOT NULL DEFAULT 0,  -- the order the author gave
    PRIMARY KEY (article_id, tag_id)
);

CREATE TABLE favorites (
    user_id     bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    article_id  bigint NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, article_id)
);

CREATE TABLE comments (
    id          bigserial PRIMARY KEY,
    article_id  bigint NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    author_id   bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    body        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Secondary indexes (idx_ prefix: `sutlab db indexes off|on` drops and
-- restores exactly these). The index page sorts by created_at, the author
-- and tag filters and the feed use the others.
CREATE INDEX idx_articles_created_at ON articles (created_at DESC, id DESC);
CREATE INDEX idx_articles_author_id ON articles (author_id, created_at DESC, id DESC);
CREATE INDEX idx_article_tags_tag_id ON article_tags (tag_id, article_id);
CREATE INDEX idx_favorites_article_id ON favorites (article_id);
CREATE INDEX idx_comments_article_id ON comments (article_id, id);
CREATE INDEX idx_follows_followee_id ON follows (followee_id);
