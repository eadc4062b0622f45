"""The web dashboard's rules: sign-in links, sessions, who may see what. The pages themselves
are ``functions.dashboard``."""
