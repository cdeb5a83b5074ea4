a = -2**2
b = a + b * c
c = a < b < c
d = not a == b
e = 2**-1**2
f = a | b ^ c & d << e + f % g
g = (a + b) * c @ d // e - ~x ** 2
h = a or b and not c or d
i = x if a else y if b else z
j = a not in b is not c in d
