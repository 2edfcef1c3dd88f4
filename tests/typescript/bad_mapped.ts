type M = { [K in]: K };
