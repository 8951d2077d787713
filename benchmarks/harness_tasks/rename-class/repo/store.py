from models import UserRecord


class Store:
    def __init__(self):
        self._items = {}

    def put(self, record: UserRecord):
        self._items[record.email] = record

    def get(self, email) -> UserRecord:
        return self._items[email]
