"""Loaded by the moto server the fault drill starts (its PYTHONPATH names this folder): moto keeps no list of its models.

moto 5.2.1 appends every model object it creates to a list on the model's class, for its dashboard
(``BaseModel.__new__``, ``instances_tracked``), and never empties it short of a reset. A DynamoDB transaction
deep-copies every table it touches (to put it back if the transaction is cancelled), and each copy is a new ``Table``
with a new ``StreamShard``, ``StreamRecord`` and ``Item`` for every record and item: all of them kept. The three
services' drill at 200 orders makes about two thousand transactions on tables of a thousand rows and an outbox stream
of thousands of records: moto grew past 20 GB and spent its time collecting garbage. Without the list, a copy lives as
long as its transaction needs it. The dashboard (``/moto-api/``) then shows no models; nothing else reads the list.
"""

try:
    from moto.core.common_models import BaseModel

    def _untracked(cls, *args, **kwargs):
        return object.__new__(cls)

    BaseModel.__new__ = staticmethod(_untracked)
except Exception:  # noqa: BLE001 - any other Python, or another moto: leave it as it is
    pass
