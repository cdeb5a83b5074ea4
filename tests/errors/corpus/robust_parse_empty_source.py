# expect: MT_ERR_NAME 1:1 no graph function to compile: the source defines no 'def'
