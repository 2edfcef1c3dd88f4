let a = 1;
-- --a;
