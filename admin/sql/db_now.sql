-- The database clock: the time an overview is read at (in its
-- transaction, the now() its other statements compare expiries with).
SELECT now();
