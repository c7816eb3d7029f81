"""What the figures measure with: ``stats`` (samples, interleaving, ratios, memory), ``profile``
(cProfile summaries), ``affinity`` (client and engine on their own cores), ``machine`` (the machine's
facts), ``progress`` (progress on stderr)."""
