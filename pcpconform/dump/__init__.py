"""dump"""
