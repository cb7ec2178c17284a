-- Profiles are looked up by name case-insensitively (lower(username), the
-- exact spelling first): the blog write-up's scenario sped up with an index
-- on its users' name (000 L183, L186), and sutlab's users_username_key
-- belongs to the UNIQUE constraint, which `sutlab db indexes off` never
-- drops. This secondary index is the one the profile lookup needs, so the
-- lab can drop and restore it like the others (idx_ prefix).
CREATE INDEX idx_users_username_lower ON users (lower(username));
