# short-keys: host-plus-id keys as a cache front-end or a domain block-list sees them (no scheme, short paths).
name = short-keys
scheme = none
https_fraction = 0
www_fraction = 0.3
hosts = 1000000
host_zipf = 0.8
path_segments = 1
query_fraction = 0
extension_fraction = 0
# Lengths of cache keys of the form host/slug-id: median 30, p99 48.
length_quantiles = 0:18, 0.25:26, 0.5:30, 0.75:34, 0.95:41, 0.99:48, 1:64
