from models import UserRecord
from report import describe
from store import Store


def test_store_and_report():
    store = Store()
    store.put(UserRecord("Ada", "ada@example.com"))
    assert describe(store.get("ada@example.com")) == "Ada <ada@example.com>"
