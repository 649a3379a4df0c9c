# ipv4: IPv4 addresses as a blocklist holds them: dotted quads, uniform over the 3.7e9 public addresses
# (no private, loopback, documentation, multicast or reserved ones). See datasets/README.md.
name = ipv4
shape = ipv4
