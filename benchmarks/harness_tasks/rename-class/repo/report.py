from models import UserRecord


def describe(record: UserRecord) -> str:
    return f"{record.name} <{record.email}>"
