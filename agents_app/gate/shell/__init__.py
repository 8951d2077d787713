"""Static analysis of shell commands: ``analyze.analyze`` lists what a command runs."""
