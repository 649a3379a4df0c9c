# crawl-frontier: URLs as a web crawler's frontier sees them (the default profile).
# Every key is `key = value`; `#` starts a comment. See datasets/README.md for what each field means and
# where the numbers come from.
name = crawl-frontier
scheme = url
https_fraction = 0.85
www_fraction = 0.55
hosts = 250000
host_zipf = 1.0
path_segments = 14, 30, 26, 15, 10, 5
query_fraction = 0.25
extension_fraction = 0.3
# Total URL length in bytes, as an inverse CDF (quantile:length), linearly interpolated. Fitted to a crawl of
# 6.6M unique URLs from 78,764 domains: mean 76.97, median 67, p95 157, p99 199, max 993.
length_quantiles = 0:30, 0.05:38, 0.25:49, 0.5:67, 0.75:86, 0.9:122, 0.95:157, 0.99:199, 0.999:360, 1:993
