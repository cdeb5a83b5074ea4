import os
from a import (b,
               c)
global g; x = 1
class A(B):
    def m(self):
        pass
try:
    x = 1
except E as e:
    pass
else:
    pass
finally:
    pass
del x
raise E
async def h():
    await z
lambda: 1
yield x
nonlocal q
x = 2
