# email: e-mail addresses as a blocklist or a mailing list holds them. See datasets/README.md for the
# templates of the local part, the providers and where the numbers come from.
name = email
shape = email
# Mail domains: the 30 big providers are ranks 1-30, the rest made-up company domains. With s = 1.4,
# gmail.com takes 24% of the addresses and the providers together 75%.
hosts = 1000000
host_zipf = 1.4
