-- sutlab_work(k): database CPU on demand, for `sutlab serve --db-work K`,
-- which sends SELECT sutlab_work(K) before every statement of an app. A lab's
-- scale model fits K from a write-up whose database spent far more CPU per
-- request (an ORM's extra queries, another engine) than sutlab's statements do.
--
-- k * 1000 iterations of integer arithmetic on two variables: CPU only, the
-- same amount for the same k, no memory that grows, no I/O, no clock (a spin
-- on clock_timestamp() would burn less CPU than asked under a CPU quota, since
-- the time it waits descheduled counts too). PL/pgSQL evaluates every
-- assignment, so nothing is optimised away; the function returns k.
--
-- VOLATILE (the default, said out loud): the planner never folds a call into a
-- constant, so each SELECT sutlab_work(K) runs the loop once (IMMUTABLE would
-- let the planner replace a call on a constant by its result). STRICT: a
-- NULL k returns NULL without looping. The loop's integers cannot overflow
-- below k = 2000000; --db-work stops at 1000000.
CREATE FUNCTION sutlab_work(k integer) RETURNS integer
    LANGUAGE plpgsql VOLATILE STRICT
AS $$
DECLARE
    x integer := 0;
BEGIN
    FOR i IN 1 .. k * 1000 LOOP
        x := (x * 31 + i) % 1000003;
    END LOOP;
    RETURN k;
END
$$;

COMMENT ON FUNCTION sutlab_work(integer) IS
    'k * 1000 loop iterations of integer arithmetic, returns k: the database CPU of sutlab serve --db-work K';
