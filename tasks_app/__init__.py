"""Plans, tasks, their lifecycle and scheduler, workers and unit execution."""
