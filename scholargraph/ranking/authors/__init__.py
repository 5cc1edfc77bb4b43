"""Author disambiguation (issue 45): who the people behind the name strings are. So far: the evaluation of a
clustering of name occurrences against gold people (`metrics`)."""
