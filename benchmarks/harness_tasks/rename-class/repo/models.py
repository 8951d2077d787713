from dataclasses import dataclass


@dataclass
class UserRecord:
    name: str
    email: str
