// Being written (net helper).
