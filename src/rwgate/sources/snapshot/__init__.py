"""The local Retraction Watch snapshot: its store, its imports and harvests, and the offline
sources it answers as."""
