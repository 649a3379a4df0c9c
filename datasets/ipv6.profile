# ipv6: IPv6 addresses as a blocklist holds them: global unicast, in RFC 5952 text, half of them servers
# (::c3f1), the rest privacy and EUI-64 addresses in /64 subnets drawn by popularity. See
# datasets/README.md.
name = ipv6
shape = ipv6
# The /64 subnets that privacy and EUI-64 addresses are drawn from, and their Zipf exponent.
hosts = 1000000
host_zipf = 0.8
