"""The chair's workflow: the submissions and the reviewer pool, conflicts of interest found in the graph and
declared in the tools' files, the exchange formats of HotCRP, OpenReview and CMT, reviewers' own expertise
settings, and the assignment problem with its solvers. Nothing here knows the affinity model (the import
contracts hold it to that); ranking/reviewers/ scores, and its assign.py hands the scores here."""
