-- RealWorld's User and Profile schemas make `bio` (like `image`) string or
-- null, and an unset bio is null: the column stops defaulting to ''. An empty
-- string is stored as NULL from now on, so existing empty values become NULL.
ALTER TABLE users ALTER COLUMN bio DROP NOT NULL;
ALTER TABLE users ALTER COLUMN bio DROP DEFAULT;
UPDATE users SET bio = NULL WHERE bio = '';
UPDATE users SET image = NULL WHERE image = '';
